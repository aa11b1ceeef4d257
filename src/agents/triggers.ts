/**
 * Forge events as agent triggers: which webhook events an agent's `on` can name, what of the event the run
 * is told (the issue, pull request or comment, as data), and which of a catalog's agents it starts. Pure.
 */
import type { ForgeEvent } from "../forge/webhooks/events.ts";
import type { Catalog } from "./catalog.ts";
import type { AGENT_EVENTS, AgentDefinition } from "./definition.ts";

export type AgentEvent = (typeof AGENT_EVENTS)[number];

/** What the run is about: written by people the agent must not trust (the prompt escapes it). */
export type EventSubject =
  | {
      kind: "issue" | "pull_request";
      number: number;
      title: string;
      body: string;
      labels: string[];
      author: string;
    }
  | { kind: "comment"; number: number; isPullRequest: boolean; body: string; author: string };

export type AgentTrigger = {
  event: AgentEvent;
  number: number;
  sender: string;
  subject: EventSubject;
  /**
   * CI may have a verdict on this pull request's head (src/agents/people-reviews.ts): only the review of a
   * person's pull request after CI runs on it, and only at this head.
   */
  afterCi?: { headSha: string };
};

/** The trigger a webhook event is, or null when no agent can run on it. */
export function agentTriggerOf(event: ForgeEvent): AgentTrigger | null {
  const name = eventName(event);
  if (name === null) return null;
  const subject = subjectOf(event);
  if (subject === null) return null;
  return { event: name, number: subject.number, sender: event.sender, subject };
}

function eventName(event: ForgeEvent): AgentEvent | null {
  switch (event.type) {
    case "issue":
      if (event.action === "opened") return "issues.opened";
      // Gitea and Forgejo say only that the labels changed: any change leaving a label counts as labelled.
      if (event.action === "labels_updated") return event.issue.labels.length > 0 ? "issues.labeled" : null;
      return event.action === "labeled" ? "issues.labeled" : null;
    case "pull_request":
      if (event.action === "opened") return "pull_request.opened";
      return event.action === "synchronized" ? "pull_request.synchronize" : null;
    case "comment":
      return event.action === "created" ? "issue_comment.created" : null;
    case "review":
    case "ci":
      return null;
  }
}

function subjectOf(event: ForgeEvent): EventSubject | null {
  switch (event.type) {
    case "issue": {
      const { number, title, body, labels, author } = event.issue;
      return { kind: "issue", number, title, body, labels, author };
    }
    case "pull_request": {
      const { number, title, body, labels, author } = event.pullRequest;
      return { kind: "pull_request", number, title, body, labels, author };
    }
    case "comment": {
      const { issueNumber, isPullRequest, body, author } = event.comment;
      return { kind: "comment", number: issueNumber, isPullRequest, body, author };
    }
    case "review":
    case "ci":
      return null;
  }
}

/**
 * The agents `event` starts: enabled repository agents whose `on` names it, and the built-ins named in
 * `builtins` (a project setting turned their `on` on: the reviewer's, for people's pull requests). Other
 * built-ins' `on` starts nothing: a project does not pay for event runs it did not ask for; a repository
 * turns a built-in on for events by overriding it with its own file.
 */
export function triggeredAgents(
  catalog: Catalog,
  event: AgentEvent,
  builtins: readonly string[] = [],
): AgentDefinition[] {
  return catalog.agents.filter(
    (agent) =>
      agent.enabled &&
      (agent.source === "repository" || builtins.includes(agent.name)) &&
      (agent.on ?? []).includes(event),
  );
}

/** How a run's trigger reads: the event and the issue or pull request it is about. */
export const triggerText = (trigger: Pick<AgentTrigger, "event" | "number">) =>
  `${trigger.event} #${trigger.number}`;

/**
 * The ProjectDO's forge-event triggers: a webhook event starts one run of each repository agent whose `on`
 * names it (src/agents/triggers.ts), read from the object's cached catalog rather than the forge. The run's
 * id derives from the delivery's content, so a redelivered or replayed webhook queues nothing new; events of
 * Conveyor's own account start nothing, so an agent's comment never starts a comment agent; and each run is
 * decided against its sender's rate and the agent's `triggeredBy` (src/agents/event-runs.ts), then supersedes
 * the agent's run on the same subject still waiting in the queue.
 */

import type { Catalog } from "../../../src/agents/catalog.ts";
import type { AgentDefinition } from "../../../src/agents/definition.ts";
import {
  EVENT_RATE_WINDOW_MS,
  type EventRunFacts,
  eventRunDecision,
} from "../../../src/agents/event-runs.ts";
import {
  ciDecided,
  type PeopleReviews,
  peopleReviewKey,
  peopleReviews,
} from "../../../src/agents/people-reviews.ts";
import { humanReview, REVIEWER, type ReviewRun, reviewerOf } from "../../../src/agents/review-run.ts";
import { agentRunRequest, eventRunId, loadCatalog } from "../../../src/agents/runs.ts";
import {
  type AgentEvent,
  type AgentTrigger,
  type EventSubject,
  triggeredAgents,
  triggerText,
} from "../../../src/agents/triggers.ts";
import type { AgentRunRequest } from "../../../src/contracts/project-object.ts";
import { sameLogin } from "../../../src/domain/logins.ts";
import type { Env } from "../../../src/env.ts";
import { canCommand } from "../../../src/hooks/route-comment.ts";
import { conveyorAccount } from "../../../src/projects/account.ts";
import { clientOf, loadRegistered, type Project } from "../../../src/projects/store.ts";
import { AgentCatalogCache } from "./catalog-cache.ts";
import type { EventRuns } from "./event-runs.ts";
import type { AgentRuns } from "./runs.ts";

export class AgentTriggers {
  readonly catalog: AgentCatalogCache;
  /**
   * Events are decided one at a time: a decision counts the runs queued before it, and the object serves other
   * calls while one awaits the forge, so two deliveries at once would each count without the other.
   */
  private turn: Promise<unknown> = Promise.resolve();
  /** Senders' write access as the forge last said (a flood of events is not a flood of permission reads). */
  private readonly writers = new Map<string, { writer: boolean; at: number }>();

  constructor(
    sql: SqlStorage,
    private readonly runs: AgentRuns,
    private readonly events: EventRuns,
  ) {
    this.catalog = new AgentCatalogCache(sql);
  }

  /**
   * Queues (through `start`) the runs `trigger` starts; returns their ids, none for a redelivery or a replay
   * (`key`: the delivery's content key).
   */
  trigger(
    env: Env,
    project: Project,
    trigger: AgentTrigger,
    key: string,
    start: (request: AgentRunRequest) => Promise<unknown>,
  ): Promise<string[]> {
    return this.inTurn(async () => {
      const catalog = await this.catalog.get(() => readCatalog(env, project.id), Date.now());
      const mode = peopleReviews(project.settings);
      const agents = agentsFor(catalog, trigger, mode);
      if (agents.length === 0) return [];
      const account = await conveyorAccount(env, project);
      if (sameLogin(trigger.sender, account)) return [];
      const writer = () => this.writer(env, project, trigger.sender);
      const queued: string[] = [];
      for (const agent of agents) {
        const afterCi =
          mode === "after_ci" && agent.name === REVIEWER
            ? await this.afterCiReview(env, project, account, trigger)
            : undefined;
        if (afterCi === null) continue;
        const runId = afterCi?.runId ?? (await eventRunId(project.id, key, agent.name));
        // Known already: a redelivery. Two copies in flight at once still queue one: the job key is the run id.
        if (this.runs.view(runId)) continue;
        const refused = await this.refusal(project, agent, trigger.sender, writer);
        if (refused) {
          console.info(JSON.stringify({ msg: "agent run not started", agent: agent.name, reason: refused }));
          continue;
        }
        const review =
          afterCi?.review ?? (await reviewOf(env, project, account, agent, trigger.subject, runId));
        if (review === "skip") continue;
        const event = { runId, subject: trigger.subject };
        const request = await agentRunRequest(env, project, agent, triggerText(trigger), event, review);
        const origin = { agent: agent.name, number: trigger.number, sender: trigger.sender };
        await start({ ...request, origin });
        queued.push(runId);
      }
      return queued;
    });
  }

  /**
   * The review of a person's pull request after CI (src/agents/people-reviews.ts), at its head: once per head
   * (the run's id derives from it, whichever event asks), and only once CI has a verdict there; null: not now.
   */
  private async afterCiReview(
    env: Env,
    project: Project,
    account: string,
    trigger: AgentTrigger,
  ): Promise<{ runId: string; review: ReviewRun } | null> {
    const { subject, number } = trigger;
    if (subject.kind !== "pull_request" || sameLogin(subject.author, account)) return null;
    const runIdAt = (head: string) => eventRunId(project.id, peopleReviewKey(number, head), REVIEWER);
    const asked = trigger.afterCi?.headSha;
    // Reviewed already: reconciliation asks each cycle, and costs the forge nothing for it.
    if (asked && this.runs.view(await runIdAt(asked))) return null;
    const forge = await forgeOf(env, project.id);
    const pull = await forge.getPullRequest(number);
    // A newer push supersedes the head CI judged: its own verdict will ask.
    if (pull.state !== "open" || (asked && pull.headSha !== asked)) return null;
    const runId = await runIdAt(pull.headSha);
    if (this.runs.view(runId) || !(await ciDecided(forge, project.settings, pull.headSha))) return null;
    return { runId, review: await humanReview(forge, runId, subject, pull) };
  }

  /** Runs `work` after every decision before it. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const done = this.turn.then(work);
    this.turn = done.catch(() => undefined);
    return done;
  }

  /** Whether `sender` may write: asked of the forge only when a decision needs it, then kept a few minutes. */
  private async writer(env: Env, project: Project, sender: string): Promise<boolean> {
    const now = Date.now();
    const known = this.writers.get(sender.toLowerCase());
    if (known && now - known.at < WRITER_TTL_MS) return known.writer;
    const registered = await loadRegistered(env, project.id);
    if (!registered) return false;
    const writer = await canCommand(clientOf(env, registered.project, await registered.secrets()), sender);
    if (this.writers.size >= MAX_KNOWN_WRITERS) this.writers.clear();
    this.writers.set(sender.toLowerCase(), { writer, at: now });
    return writer;
  }

  /** Why `agent` does not run for `sender` now (src/agents/event-runs.ts), or null. */
  private async refusal(
    project: Project,
    agent: AgentDefinition,
    sender: string,
    writer: () => Promise<boolean>,
  ): Promise<string | null> {
    const facts: EventRunFacts = {
      sender,
      senderRecent: this.events.startedBy(sender, Date.now() - EVENT_RATE_WINDOW_MS),
      perSenderPerHour: project.settings.eventRuns.perSenderPerHour,
      writersOnly: agent.triggeredBy === "writers",
      writer: "unknown",
    };
    let decision = eventRunDecision(facts);
    if (decision.kind === "ask") decision = eventRunDecision({ ...facts, writer: await writer() });
    return decision.kind === "skip" ? decision.reason : null;
  }
}

/** How long the forge's answer about a sender's write access is taken as standing. */
const WRITER_TTL_MS = 5 * 60_000;
const MAX_KNOWN_WRITERS = 1_000;

/**
 * An agent that submits reviews, run on a pull request's event, reviews that pull request at its head, a
 * person's: Conveyor's own pull requests (pushed to by its runner's account) are the critic's, reviewed
 * through their issues (`skip`).
 */
async function reviewOf(
  env: Env,
  project: Project,
  account: string,
  agent: AgentDefinition,
  subject: EventSubject,
  runId: string,
): Promise<ReviewRun | undefined | "skip"> {
  if (!agent.outputs.submit_review || subject.kind !== "pull_request") return undefined;
  if (sameLogin(subject.author, account)) return "skip";
  return humanReview(await forgeOf(env, project.id), runId, subject);
}

async function forgeOf(env: Env, projectId: string) {
  const registered = await loadRegistered(env, projectId);
  if (!registered) throw new Error(`project ${projectId} is not registered`);
  return clientOf(env, registered.project, await registered.secrets());
}

/** Pushes to a pull request: with reviews after CI, a push whose head CI has judged already is reviewed. */
const PUSHES: readonly AgentEvent[] = ["pull_request.opened", "pull_request.synchronize"];

/**
 * The agents a trigger starts: a push's and other events' agents (`triggeredAgents`), with the reviewer of
 * people's pull requests as `mode` says — on each push, or after CI (never on a push itself then, unless CI
 * judged its head already); a CI verdict's trigger starts that reviewer only.
 */
function agentsFor(catalog: Catalog, trigger: AgentTrigger, mode: PeopleReviews): AgentDefinition[] {
  const reviewer = mode === "after_ci" ? reviewerOf(catalog) : undefined;
  if (trigger.afterCi) return reviewer ? [reviewer] : [];
  const agents = triggeredAgents(catalog, trigger.event, mode === "on_push" ? [REVIEWER] : []);
  if (mode !== "after_ci") return agents;
  const others = agents.filter((agent) => agent.name !== REVIEWER);
  const push = trigger.subject.kind === "pull_request" && PUSHES.includes(trigger.event);
  return reviewer && push ? [...others, reviewer] : others;
}

async function readCatalog(env: Env, projectId: string): Promise<Catalog> {
  const registered = await loadRegistered(env, projectId);
  if (!registered) throw new Error(`project ${projectId} is not registered`);
  return loadCatalog(registered);
}

/**
 * The triage of an escalation: every escalation of an issue starts a run of the `triage` agent (the built-in,
 * or the repository's override) and of any repository agent whose `on` names `issues.escalated`. The run reads
 * what went wrong — the escalation's cause and reason, the issue's lifecycle history, its dead letters, the
 * failing CI checks, the session's own summary — and proposes one next step through `propose_step`, which the
 * Worker checks like any output and hands to the issue as a `triage_proposal` (durable-objects/project/agents/).
 */
import type { DeadLetter, HistoryEntry, IssueSummary } from "../contracts/issue-object.ts";
import type { Escalation } from "../domain/escalation.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import type { FileReader, Project } from "../projects/store.ts";
import type { EscalationContext } from "./escalation-context.ts";
import { agentRunRequest, catalogOf, eventRunId } from "./runs.ts";
import { triggeredAgents } from "./triggers.ts";

export const TRIAGE = "triage";

/** What the Worker keeps of a triage run: the issue, and the escalation its proposal answers. */
export type TriageBinding = { number: number; escalation: number };

export type TriageRun = { binding: TriageBinding; escalation: EscalationContext };

/** At most this many history entries, each reason cut at this length: the prompt stays bounded. */
export const TRIAGE_HISTORY = 40;
const MAX_TEXT = 1_000;
const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text);

/** The escalation as a triage run reads it, from the issue's own record. Pure. */
export function escalationContext(
  issue: IssueSummary,
  escalation: Escalation,
  text: { title: string; body: string },
  history: readonly HistoryEntry[],
  deadLetters: readonly DeadLetter[],
): EscalationContext {
  const red = [...history].reverse().find((entry) => entry.ci?.result === "red");
  return {
    issue: { number: issue.number, title: text.title, body: cut(text.body) },
    escalation,
    state: issue.state,
    reason: issue.reason === null ? null : cut(issue.reason),
    sessionSummary: issue.summary ? cut(issue.summary) : null,
    history: history.slice(-TRIAGE_HISTORY).map((entry) => ({
      at: new Date(entry.at).toISOString(),
      event: entry.event,
      from: entry.from,
      to: entry.to,
      outcome: entry.outcome,
      ...(entry.reason && { reason: cut(entry.reason) }),
    })),
    deadLetters: deadLetters.map((letter) => ({
      effect: letter.kind,
      attempts: letter.attempts,
      error: cut(letter.error),
    })),
    failingChecks: (red?.ci?.checks ?? []).map(({ name, outcome, description }) => ({
      name,
      outcome,
      ...(description && { description: cut(description) }),
    })),
  };
}

/**
 * Queues the triage runs of one escalation, once each (a run's id derives from `key`, the effect's); the
 * names of the agents queued (none when the triage is disabled and no repository agent asks).
 */
export async function queueTriageRuns(
  env: Env,
  project: Project,
  forge: FileReader,
  escalation: EscalationContext,
  key: string,
): Promise<string[]> {
  const agents = triggeredAgents(await catalogOf(forge, project), "issues.escalated", [TRIAGE]);
  const { number } = escalation.issue;
  const triage: TriageRun = { binding: { number, escalation: escalation.escalation.n }, escalation };
  const trigger = `escalation ${escalation.escalation.n} of #${number} (${escalation.escalation.cause})`;
  for (const agent of agents) {
    const runId = await eventRunId(project.id, `triage\n${key}`, agent.name);
    const request = await agentRunRequest(env, project, agent, trigger, { runId }, undefined, triage);
    await projectStub(env, project.id).startAgentRun(request);
  }
  return agents.map((agent) => agent.name);
}

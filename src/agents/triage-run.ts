/**
 * The triage of an escalation: every escalation of an issue starts a run of the `triage` agent (the built-in,
 * or the repository's override) and of any repository agent whose `on` names `issues.escalated`. The run reads
 * what went wrong — the escalation's cause and reason, the issue's lifecycle history, its dead letters, the
 * failing CI checks, the session's own summary — and proposes one next step through `propose_step`, which the
 * Worker checks like any output and hands to the issue as a `triage_proposal` (durable-objects/project/agents/).
 */
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

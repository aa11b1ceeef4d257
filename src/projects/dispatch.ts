/**
 * Entering the lifecycle: an open issue labelled backlog is triaged through its dependency gate, and when an
 * issue opens or closes, the issues waiting for it are gated again at once (event, not poll).
 */
import type { Brief } from "../domain/lifecycle.ts";
import { needsWriter } from "../domain/queueing.ts";
import type { Env } from "../env.ts";
import { ACTION_LABEL, formulaOf } from "../formulas/formula.ts";
import type { EventEnvelope } from "../issue-events.ts";
import { issueStub } from "../issue-stub.ts";
import { type Forges, gateFor } from "./gate.ts";
import { type Cause, sendEvent } from "./lifecycle-client.ts";
import { dependentsOf, lifecycleStates, type MirroredIssue, mirroredIssues } from "./mirror.ts";
import type { Project } from "./store.ts";

/** Lifecycle states in which the dependency gate still decides; later ones have started work. */
const GATED = new Set(["new", "blocked", "queued"]);

export const isGated = (state: string | undefined) => state === undefined || GATED.has(state);

export const wantsWork = (project: Project, issue: MirroredIssue) =>
  issue.state === "open" && issue.labels.includes(project.settings.labels.backlog);

/**
 * Triages the issue if it wants work and its lifecycle is still at the gate; the DO's answer if an event was
 * sent, with `delivery` (see `sendEvent`) recorded by the DO. `brief` is the text a writer queued; an issue not
 * yet in the lifecycle is not triaged without one.
 */
export async function triage(
  env: Env,
  project: Project,
  issue: MirroredIssue,
  state: string | undefined,
  id: string,
  cause: Cause,
  forges: Forges,
  delivery?: EventEnvelope["delivery"],
  brief?: Brief,
) {
  if (!wantsWork(project, issue) || !isGated(state) || (needsWriter(state) && !brief)) return null;
  // A regate reads the text a writer queued before, not the mirror's (anyone's latest edit).
  const text = brief ?? (await queuedBrief(env, project.id, issue.number));
  const action = actionOf(issue, text);
  if (action && "error" in action) {
    // Said once (the event's id is the triage's): the issue stays out of the lifecycle until it is fixed.
    const text = `Conveyor cannot start this action: ${action.error}. Name its formula with a line \`Formula: <name>\` in the issue or a label \`formula/<name>\`, then queue it again.`;
    return sendEvent(
      env,
      project,
      issue.number,
      `${id}:formula`,
      cause,
      { type: "reply", thread: issue.number, text },
      delivery,
    );
  }
  const gate = await gateFor(env, project, issue, text?.body ?? issue.body, forges);
  const event = { type: "triage" as const, ...gate, ...(brief && { brief }), ...(action && { action }) };
  return sendEvent(env, project, issue.number, id, cause, event, delivery);
}

/** The text a writer queued for an issue in the lifecycle (null: none, or queued before briefs were kept). */
async function queuedBrief(env: Env, project: string, number: number): Promise<Brief | null> {
  return (await issueStub(env, project, number).summary())?.brief ?? null;
}

/**
 * An issue labelled `action` is an operational task following the formula it names (src/formulas); the
 * text a writer queued names it, else the mirror's. Null for a code issue.
 */
function actionOf(issue: MirroredIssue, brief: Brief | null): { formula: string } | { error: string } | null {
  if (!issue.labels.includes(ACTION_LABEL)) return null;
  const choice = formulaOf(brief?.body ?? issue.body, issue.labels);
  switch (choice.kind) {
    case "named":
      return { formula: choice.name };
    case "invalid":
      return { error: choice.error };
    case "none":
      return { error: "it is labelled action but names no formula" };
  }
}

/** Re-gates every issue that declares `dependency` as a dependency; returns how many were sent an event. */
export async function regateDependents(
  env: Env,
  project: Project,
  dependency: number,
  idPrefix: string,
  cause: Cause,
  forges: Forges,
): Promise<number> {
  const dependents = await mirroredIssues(env, project.id, await dependentsOf(env, project.id, dependency));
  const states = await lifecycleStates(
    env,
    project.id,
    dependents.map((d) => d.number),
  );
  let sent = 0;
  for (const dependent of dependents) {
    const id = `${idPrefix}:regate:${dependent.number}`;
    if (await triage(env, project, dependent, states.get(dependent.number), id, cause, forges)) sent++;
  }
  return sent;
}

/**
 * An escalation's triage: its runs are queued on the project's object, once each (their ids derive from the
 * effect's key), with what went wrong as the issue's object records it. An issue that has left the escalation
 * by the time this is delivered needs no triage.
 */
import { escalationContext } from "../../../src/agents/escalation-context.ts";
import { queueTriageRuns } from "../../../src/agents/triage-run.ts";
import { mirroredIssues } from "../../../src/projects/mirror.ts";
import { type Deliverers, EffectDropped } from "./deliverers.ts";
import { forgeOf } from "./forge.ts";

/** The dead letters a triage run is shown, newest first. */
const DEAD_LETTERS_SHOWN = 10;
/** The history read for it; the context keeps the latest (src/agents/triage-run.ts). */
const HISTORY_READ = 100;

export const TRIAGE_DELIVERERS: Deliverers = {
  request_triage: async (effect, ctx) => {
    const { issue } = ctx;
    if (issue.escalation?.n !== effect.escalation)
      throw new EffectDropped(`the issue has left escalation ${effect.escalation}`);
    if (!ctx.record) throw new Error("a triage is requested by the issue's object only");
    const { history, deadLetters } = ctx.record(HISTORY_READ, DEAD_LETTERS_SHOWN);
    const { project, forge } = await forgeOf(ctx);
    // The issue's text as queued, else Conveyor's mirror of the forge, else the forge itself.
    const text =
      issue.brief ??
      (await mirroredIssues(ctx.env, project.id, [issue.number]))[0] ??
      (await forge.getIssue(issue.number));
    const context = escalationContext(issue, issue.escalation, text, history, deadLetters);
    await queueTriageRuns(ctx.env, project, forge, context, ctx.key);
    return undefined;
  },
};

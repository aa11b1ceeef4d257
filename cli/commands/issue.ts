/**
 * `issue list`, `issue show`, the operator's lifecycle events (`approve`, `retry`, `abandon`), and `redeliver`,
 * which sends an effect Conveyor gave up on again.
 */
import { z } from "zod";
import { formatTime } from "../../src/dashboard/format.ts";
import { STATES } from "../../src/domain/lifecycle.ts";
import { type Command, command, issueNumber, projectOf } from "../command.ts";
import { table, usd } from "../output.ts";
import { applyResultSchema, issueListSchema, issueViewSchema, redeliveredSchema } from "../schemas.ts";

export const issueList = command({
  name: "issue list",
  args: [],
  usage: "issue list --project <id> [--state <state>] [--limit <n>] [--after <number>]",
  summary: "a project's issues by number, with state, iteration, PR and reason",
  options: { state: { type: "string" }, limit: { type: "string" }, after: { type: "string" } },
  input: z.object({
    state: z.enum(STATES).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
    after: z.coerce.number().int().min(0).optional(),
  }),
  async run({ state, limit, after }, ctx) {
    const project = projectOf(ctx);
    const query = new URLSearchParams({
      ...(state && { state }),
      ...(limit !== undefined && { limit: String(limit) }),
      ...(after !== undefined && { after: String(after) }),
    });
    const page = await ctx.api.call("GET", `/projects/${project}/issues?${query}`, issueListSchema);
    const rows = page.issues.map((i) => [
      `#${i.number}`,
      i.state,
      String(i.iteration),
      i.prNumber === null ? "" : `#${i.prNumber}`,
      formatTime(i.updatedAt),
      i.reason ?? "",
    ]);
    const text = [
      rows.length
        ? table(["ISSUE", "STATE", "ITER", "PR", "UPDATED", "REASON"], rows)
        : `no issues in ${project}${state ? ` in ${state}` : ""}`,
      page.next !== null && `more: --after ${page.next}`,
    ].filter((line) => typeof line === "string");
    ctx.print(text.join("\n"), page);
  },
});

export const issueShow = command({
  name: "issue show",
  args: ["number"],
  usage: "issue show <number> --project <id>",
  summary: "an issue's state, branch, session, counters and history",
  input: z.object({ number: issueNumber }),
  async run({ number }, ctx) {
    const project = projectOf(ctx);
    const view = await ctx.api.call("GET", `/projects/${project}/issues/${number}`, issueViewSchema);
    const facts = [
      `${view.project}#${view.number}  ${view.state}  iteration ${view.iteration}`,
      view.reason && `reason: ${view.reason}`,
      [
        view.branch && `branch ${view.branch}`,
        view.headSha && `head ${view.headSha}`,
        view.prNumber !== null && `PR #${view.prNumber}`,
        view.sessionId && `session ${view.sessionId}`,
      ]
        .filter(Boolean)
        .join(" · "),
      [
        `CI fixes ${view.ciFixes}`,
        view.reviewRounds === undefined
          ? `changes requested in a row ${view.criticRounds}`
          : `critic rounds ${view.reviewRounds}`,
        view.costUsd !== undefined && `cost ${usd(view.costUsd)}`,
      ]
        .filter(Boolean)
        .join(" · "),
      view.blockers.length > 0 && `blocked by ${view.blockers.join(", ")}`,
      view.escalation &&
        `escalation ${view.escalation.n}: ${view.escalation.cause.replaceAll("_", " ")} (from ${view.escalation.from})`,
      view.proposal &&
        `the ${view.proposal.agent} proposes: ${view.proposal.step.kind} — ${view.proposal.diagnosis} (a writer accepts with /conveyor accept)`,
      view.recovering &&
        "waits for the forge to answer again: what it gave up on meanwhile is then sent again",
      ...view.timers.map((t) => `${t.kind} timer due ${formatTime(t.dueAt)}`),
      ...(view.deadLetters ?? []).map(
        (d) => `gave up on ${d.kind} (dead letter ${d.id}, ${formatTime(d.at)}): ${d.error}`,
      ),
      ...(view.droppedEffects ?? []).map((d) => `dropped ${d.kind} (${formatTime(d.at)}): ${d.reason}`),
    ].filter((line): line is string => typeof line === "string" && line !== "");
    const history = view.history.map((h) => [
      String(h.seq),
      formatTime(h.at),
      h.event,
      h.outcome === "applied" ? `${h.from} → ${h.to}` : `${h.outcome} in ${h.from}`,
      `${h.cause.kind} ${h.cause.id}`,
      h.reason ?? "",
    ]);
    ctx.print(
      [...facts, "", table(["#", "WHEN", "EVENT", "EDGE", "CAUSE", "REASON"], history)].join("\n"),
      view,
    );
  },
});

function operatorEvent(name: "approve" | "retry" | "abandon", type: string, summary: string): Command {
  return command({
    name,
    args: ["number"],
    usage: `${name} <number> --project <id> [--by <name>]`,
    summary,
    options: { by: { type: "string" } },
    input: z.object({ number: issueNumber, by: z.string().min(1).max(90).optional() }),
    async run({ number, by }, ctx) {
      const project = projectOf(ctx);
      const event = { type, by: `${by ?? ctx.env.USER ?? "operator"} (cli)` };
      const result = await ctx.api.call(
        "POST",
        `/projects/${project}/issues/${number}/events`,
        applyResultSchema,
        {
          event,
        },
      );
      ctx.print(`${name}: ${project}#${number} is now ${result.state}`, result);
    },
  });
}

export const approve = operatorEvent("approve", "human_approval", "approve a merge that waits for a human");
export const retry = operatorEvent("retry", "retry", "start an escalated or abandoned issue again");
export const abandon = operatorEvent("abandon", "abandon", "stop work on an issue");

export const redeliver = command({
  name: "redeliver",
  args: ["number", "id"],
  usage: "redeliver <number> <dead-letter id> --project <id>",
  summary: "send an effect Conveyor gave up on again (its id is in `issue show`), once its cause is fixed",
  input: z.object({
    number: issueNumber,
    id: z.coerce.number({ error: "the dead letter id must be a number" }).int().positive(),
  }),
  async run({ number, id }, ctx) {
    const project = projectOf(ctx);
    const result = await ctx.api.call(
      "POST",
      `/projects/${project}/issues/${number}/dead-letters/${id}/redeliver`,
      redeliveredSchema,
    );
    ctx.print(`redeliver: ${result.kind} of ${project}#${number} is queued again`, result);
  },
});

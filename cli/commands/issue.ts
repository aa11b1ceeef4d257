/** `issue show`, and the operator's lifecycle events: `approve`, `retry`, `abandon`. */
import { z } from "zod";
import { formatTime } from "../../src/dashboard/format.ts";
import { CliError } from "../api.ts";
import { type Command, type Context, command, issueNumber } from "../command.ts";
import { table } from "../output.ts";
import { applyResultSchema, issueViewSchema } from "../schemas.ts";

function projectOf(ctx: Context): string {
  if (!ctx.project) throw new CliError("this command needs --project (or CONVEYOR_PROJECT)", 2);
  return ctx.project;
}

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
      `CI fixes ${view.ciFixes} · critic rounds ${view.criticRounds}`,
      view.blockers.length > 0 && `blocked by ${view.blockers.join(", ")}`,
      ...view.timers.map((t) => `${t.kind} timer due ${formatTime(t.dueAt)}`),
    ].filter((line): line is string => typeof line === "string" && line !== "");
    const history = view.history.map((h) => [
      String(h.seq),
      formatTime(h.at),
      h.event,
      h.outcome === "applied" ? `${h.from} → ${h.to}` : `rejected in ${h.from}`,
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
      const event = { type, by: `${by ?? process.env.USER ?? "operator"} (cli)` };
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

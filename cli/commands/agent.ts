/** `agent list`, `agent run`, `agent show`: a project's agents, a manual run, and what became of a run. */
import { z } from "zod";
import { AGENT_NAME } from "../../src/agents/definition.ts";
import { formatTime } from "../../src/dashboard/format.ts";
import { command, projectOf } from "../command.ts";
import { table, usd } from "../output.ts";
import { agentListSchema, agentRunSchema, agentRunStartedSchema } from "../schemas.ts";

const agentName = z
  .string()
  .regex(AGENT_NAME, { error: "an agent's name: lower case letters, digits and -" });

export const agentList = command({
  name: "agent list",
  args: [],
  usage: "agent list --project <id>",
  summary:
    "a project's agents (built-in or from its repository), schedules, last runs and broken definitions",
  input: z.object({}),
  async run(_input, ctx) {
    const project = projectOf(ctx);
    const list = await ctx.api.call("GET", `/projects/${project}/agents`, agentListSchema);
    const rows = list.agents.map((a) => [
      a.name,
      a.source,
      a.schedule ?? "",
      a.enabled ? "yes" : "no",
      a.lastRun ? `${a.lastRun.status} ${formatTime(a.lastRun.createdAt)} ${a.lastRun.id}` : "",
    ]);
    const problems = list.problems.map((p) => `${p.name} (${p.source}) does not run: ${p.error}`);
    ctx.print(
      [table(["AGENT", "SOURCE", "SCHEDULE", "ENABLED", "LAST RUN"], rows), ...problems].join("\n"),
      list,
    );
  },
});

export const agentRun = command({
  name: "agent run",
  args: ["name"],
  usage: "agent run <name> --project <id>",
  summary: "queue a run of an agent now; prints the run's id",
  input: z.object({ name: agentName }),
  async run({ name }, ctx) {
    const project = projectOf(ctx);
    const started = await ctx.api.call(
      "POST",
      `/projects/${project}/agents/${name}/runs`,
      agentRunStartedSchema,
    );
    ctx.print(
      `queued ${started.runId}: conveyor agent show ${name} ${started.runId} --project ${project}`,
      started,
    );
  },
});

export const agentShow = command({
  name: "agent show",
  args: ["name", "run"],
  usage: "agent show <name> <run id> --project <id>",
  summary: "a run's status, cost, and each output it asked for: applied, or rejected with the reason",
  input: z.object({ name: agentName, run: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/) }),
  async run({ name, run }, ctx) {
    const project = projectOf(ctx);
    const view = await ctx.api.call("GET", `/projects/${project}/agents/${name}/runs/${run}`, agentRunSchema);
    const head = `${view.agent} ${view.id}  ${view.status}  ${view.trigger}  cost ${usd(view.costUsd)}`;
    const rows = (view.decisions ?? []).map((d, i) => [
      String(i + 1),
      d.output.type,
      outcome(d),
      d.reason ?? d.failed ?? "",
    ]);
    const lines = [
      head,
      view.error && `error: ${view.error}`,
      view.decisions === null ? "no outputs yet" : table(["#", "OUTPUT", "OUTCOME", "REASON"], rows),
    ].filter((line): line is string => typeof line === "string" && line !== "");
    ctx.print(lines.join("\n"), view);
  },
});

/** What became of an output: a held one waits in the vault until its item is decided. */
function outcome(d: NonNullable<z.output<typeof agentRunSchema>["decisions"]>[number]): string {
  if (d.status === "rejected") return "rejected";
  if (d.applied) return "applied";
  if (d.failed) return "failed";
  return d.vault ? `in the vault (${d.vault})` : "accepted";
}

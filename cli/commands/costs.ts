/** `costs`: model spend per UTC day and the issues that cost most, of one project or of every project. */
import { z } from "zod";
import { type CostReport, costQuerySchema, costReportSchema } from "../../src/usage/cost-report.ts";
import { command } from "../command.ts";
import { table, usd } from "../output.ts";

/** `ops#40`, or `ops agents` for the spend of the project's agent runs (number 0: no issue). */
const issueName = (i: CostReport["issues"][number]) =>
  i.number === 0 ? `${i.project} agents` : `${i.project}#${i.number}`;

function costLines(report: CostReport, days: number): string {
  const scope = report.project ?? "every project";
  const spent = report.days.filter((d) => d.usd > 0);
  if (spent.length === 0) return `${scope}: no model spend in the last ${days} days (UTC)`;
  const issues = report.issues.map((i) => [issueName(i), i.state ?? "", usd(i.usd), i.title ?? ""]);
  return [
    `${scope}: ${usd(report.totalUsd)} in the last ${days} days (UTC; days without spend left out)`,
    table(
      ["DAY", "COST"],
      spent.map((d) => [d.day, usd(d.usd)]),
    ),
    "",
    `the ${issues.length === 1 ? "issue" : `${issues.length} issues`} that cost most:`,
    table(["ISSUE", "STATE", "COST", "TITLE"], issues),
  ].join("\n");
}

export const costs = command({
  name: "costs",
  args: [],
  usage: "costs [--project <id>] [--days <n>] [--limit <n>]",
  summary:
    "model spend per day (UTC, the last 30 days) and the issues that cost most; every project without --project",
  options: { days: { type: "string" }, limit: { type: "string" } },
  input: z.object({ days: costQuerySchema.shape.days, limit: costQuerySchema.shape.limit }),
  async run({ days, limit }, ctx) {
    const query = new URLSearchParams({ days: String(days), limit: String(limit) });
    const path = ctx.project ? `/projects/${ctx.project}/costs?${query}` : `/costs?${query}`;
    const report = await ctx.api.call("GET", path, costReportSchema);
    ctx.print(costLines(report, days), report);
  },
});

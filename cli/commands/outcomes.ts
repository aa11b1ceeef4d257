/** `outcomes`: what the factory delivered over a window (src/outcomes), of one project or of all. */
import { z } from "zod";
import { formatDuration, formatRatio } from "../../src/dashboard/format.ts";
import { type Figures, outcomesCsv } from "../../src/outcomes/outcomes.ts";
import { OUTCOME_TABLES } from "../../src/outcomes/window.ts";
import { command } from "../command.ts";
import { table, usd } from "../output.ts";
import { outcomesSchema } from "../schemas.ts";

const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date is YYYY-MM-DD (UTC)");
const orNone = (value: number | null, format: (v: number) => string) =>
  value === null ? "–" : format(value);
const rounds = (n: number) => n.toFixed(1);

function summary(t: Figures): string[] {
  return [
    `merged ${t.merged} (${t.finished} finished) · label → merged p50 ${orNone(t.leadTimeP50Ms, formatDuration)}, p90 ${orNone(t.leadTimeP90Ms, formatDuration)} · first-pass CI ${formatRatio(t.firstPassCiRate)}`,
    `rounds per merged issue: critic ${orNone(t.criticRoundsPerIssue, rounds)}, human ${orNone(t.humanRoundsPerIssue, rounds)} · escalations ${t.escalations} (${formatRatio(t.escalationRate)} of finished issues)`,
    `cost ${usd(t.costUsd)}, ${orNone(t.costPerMergedUsd, usd)} per merged issue · cache hit ${formatRatio(t.cacheHitRatio)}`,
  ];
}

export const outcomes = command({
  name: "outcomes",
  args: [],
  usage:
    "outcomes [--project <id>] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--csv [--table days|waiting|causes]]",
  summary:
    "issues merged, label → merged time, first-pass CI, rounds, escalations, cost and cache hits per day, and where the factory waits (default: the last 30 days; every project without --project)",
  options: {
    from: { type: "string" },
    to: { type: "string" },
    csv: { type: "boolean" },
    table: { type: "string" },
  },
  input: z.object({
    from: date.optional(),
    to: date.optional(),
    csv: z.boolean().optional(),
    table: z.enum(OUTCOME_TABLES).optional(),
  }),
  async run({ from, to, csv, table: which }, ctx) {
    const query = new URLSearchParams({ ...(from && { from }), ...(to && { to }) }).toString();
    const path = `${ctx.project ? `/projects/${ctx.project}` : ""}/outcomes${query ? `?${query}` : ""}`;
    const report = await ctx.api.call("GET", path, outcomesSchema);
    // The CSV ends its own last line; `--json` prints the report instead, as elsewhere.
    if (csv) return ctx.print(outcomesCsv(report, which).replace(/\r\n$/, ""), report);
    const days = report.days.map((d) => [
      d.day,
      String(d.merged),
      orNone(d.leadTimeP50Ms, formatDuration),
      orNone(d.leadTimeP90Ms, formatDuration),
      formatRatio(d.firstPassCiRate),
      orNone(d.criticRoundsPerIssue, rounds),
      orNone(d.humanRoundsPerIssue, rounds),
      String(d.escalations),
      usd(d.costUsd),
      orNone(d.costPerMergedUsd, usd),
      formatRatio(d.cacheHitRatio),
    ]);
    const text = [
      `${report.project ?? "every project"}: ${report.from} … ${report.to} (UTC days)`,
      ...summary(report.totals),
      "",
      table(
        [
          "DAY",
          "MERGED",
          "P50",
          "P90",
          "FIRST-PASS",
          "CRITIC",
          "HUMAN",
          "ESC",
          "COST",
          "PER MERGED",
          "CACHE",
        ],
        days,
      ),
      "",
      report.escalationCauses.length
        ? table(
            ["ESCALATIONS", "CAUSE"],
            report.escalationCauses.map((c) => [String(c.count), c.label]),
          )
        : "no escalations",
      "",
      table(
        ["STATE", "TIME SUMMED"],
        report.waiting.map((w) => [w.state, formatDuration(w.ms)]),
      ),
    ];
    ctx.print(text.join("\n"), report);
  },
});

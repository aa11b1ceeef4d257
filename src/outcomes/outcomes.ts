/**
 * What the factory delivered over a window, day by day and in all, from the rows D1 aggregated
 * (./queries.ts): issues merged, label → merged time (p50, p90), first-pass CI rate, critic and human rounds
 * per merged issue, escalations (rate and causes), cost per merged issue and per day, the cache-hit ratio,
 * and where the factory waits (time per state, summed over every issue). Pure.
 */
import { cacheHitRatio } from "../usage/cache-hit.ts";
import type { FinishedRow, OutcomeRows } from "./rows.ts";
import { dayNumber as dayOf, isoDay, type OutcomeTable, type Window } from "./window.ts";

/** One day's figures, or the window's; null where there was nothing to measure (no merge, no usage). */
export type Figures = {
  merged: number;
  /** Issues that ended: merged, done (actions) or abandoned. */
  finished: number;
  leadTimeP50Ms: number | null;
  leadTimeP90Ms: number | null;
  /** Of merged issues that went through CI, the share whose first result was green. */
  firstPassCiRate: number | null;
  criticRoundsPerIssue: number | null;
  humanRoundsPerIssue: number | null;
  escalations: number;
  /** Of finished issues, the share that escalated at least once. */
  escalationRate: number | null;
  costUsd: number;
  /** What the issues merged cost over their whole life, per issue. */
  costPerMergedUsd: number | null;
  cacheHitRatio: number | null;
};

export type DayFigures = Figures & { day: string };

export type Outcomes = {
  /** Null: every project. */
  project: string | null;
  from: string;
  to: string;
  days: DayFigures[];
  totals: Figures;
  /** What escalations were caused by, most frequent first. */
  escalationCauses: { cause: string; label: string; count: number }[];
  /** Time issues spent in each state within the window, summed, longest first. */
  waiting: { state: string; ms: number }[];
};

const FIGURE_COLUMNS = [
  "merged",
  "finished",
  "leadTimeP50Ms",
  "leadTimeP90Ms",
  "firstPassCiRate",
  "criticRoundsPerIssue",
  "humanRoundsPerIssue",
  "escalations",
  "escalationRate",
  "costUsd",
  "costPerMergedUsd",
  "cacheHitRatio",
] as const satisfies readonly (keyof Figures)[];

/** The event that moved an issue to `escalated`, in words. */
const CAUSES: Record<string, string> = {
  phase: "the session stopped: it asked, failed, or finished without a change",
  ci: "CI still red after the fixes allowed",
  review_failed: "the critic gave no valid report",
  timeout: "a timer ran out",
  effect_failed: "Conveyor gave up on an effect",
  budget_exceeded: "a budget was spent",
  head_mismatch: "the branch was not at the head reported",
  conflict: "a conflict with the base",
  merge_failed: "the merge failed",
};
export const causeLabel = (cause: string) => CAUSES[cause] ?? cause;

/** Nearest-rank percentile of ascending `sorted`; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? null;
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
const share = (count: number, of: number) => (of === 0 ? null : count / of);

type Usage = { usd: number; inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
const NO_USAGE: Usage = { usd: 0, inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

function figures(finished: readonly FinishedRow[], usage: Usage, escalations: number): Figures {
  const merged = finished.filter((row) => row.ended === "merged");
  const leadTimes = merged
    .flatMap((row) => (row.labeled_at === null ? [] : [row.at - row.labeled_at]))
    .sort((a, b) => a - b);
  const withCi = merged.filter((row) => row.first_ci !== null);
  const mergedCost = merged.reduce((sum, row) => sum + row.usd, 0);
  return {
    merged: merged.length,
    finished: finished.length,
    leadTimeP50Ms: percentile(leadTimes, 50),
    leadTimeP90Ms: percentile(leadTimes, 90),
    firstPassCiRate: share(withCi.filter((row) => row.first_ci === "awaiting_review").length, withCi.length),
    criticRoundsPerIssue: mean(merged.map((row) => row.critic_rounds)),
    humanRoundsPerIssue: mean(merged.map((row) => row.human_rounds)),
    escalations,
    escalationRate: share(finished.filter((row) => row.escalations > 0).length, finished.length),
    costUsd: usage.usd,
    costPerMergedUsd: merged.length === 0 ? null : mergedCost / merged.length,
    cacheHitRatio: cacheHitRatio(usage),
  };
}

const addUsage = (a: Usage, b: Usage): Usage => ({
  usd: a.usd + b.usd,
  inputTokens: a.inputTokens + b.inputTokens,
  cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
  cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
});

/** States no issue waits in: not an issue yet, or done with. */
const ENDS = new Set(["new", "merged", "done", "abandoned"]);

/**
 * Time per state within the window, summed over issues, from grouped edges (no issue's edges are ordered):
 *
 * - An issue's state when the window began is the `from` of its first edge since then, or its state now if
 *   it has none: per state, the edges since then leaving it, less those entering it, plus the issues in it
 *   now (each issue's edges telescope to first `from` − last `to`, and its last `to` is its state now).
 * - Each issue spends the window's rest in the state it was in at its start; each edge inside the window
 *   then moves the rest of the window, from the edge to the end, from its `from` to its `to`.
 *
 * Issues that were not issues yet (`new`) drop out, as do the ones done with.
 */
function timeInStates(rows: Pick<OutcomeRows, "edges" | "states" | "windowMs">): Map<string, number> {
  const time = new Map<string, number>();
  const add = (state: string, ms: number) => time.set(state, (time.get(state) ?? 0) + ms);
  for (const { state, n } of rows.states) add(state, n * rows.windowMs);
  for (const edge of rows.edges) {
    add(edge.from_state, edge.n * rows.windowMs - edge.ms);
    add(edge.to_state, edge.ms - edge.n * rows.windowMs);
  }
  return time;
}

export function outcomes(rows: OutcomeRows, window: Window, project: string | null): Outcomes {
  const usageByDay = new Map<number, Usage>(
    rows.usage.map((u) => [
      u.day,
      { usd: u.usd, inputTokens: u.input, cacheReadTokens: u.cache_read, cacheWriteTokens: u.cache_write },
    ]),
  );
  const escalationsByDay = new Map<number, number>();
  const causes = new Map<string, number>();
  for (const edge of rows.edges) {
    if (!edge.inside || edge.day === null || edge.to_state !== "escalated" || edge.from_state === "escalated")
      continue;
    escalationsByDay.set(edge.day, (escalationsByDay.get(edge.day) ?? 0) + edge.n);
    causes.set(edge.event, (causes.get(edge.event) ?? 0) + edge.n);
  }
  const finishedByDay = new Map<number, FinishedRow[]>();
  for (const row of rows.finished) {
    const day = dayOf(row.at);
    finishedByDay.set(day, [...(finishedByDay.get(day) ?? []), row]);
  }
  const days: DayFigures[] = [];
  for (let day = window.firstDay; day <= window.lastDay; day++) {
    const usage = usageByDay.get(day) ?? NO_USAGE;
    const finished = finishedByDay.get(day) ?? [];
    days.push({ day: isoDay(day), ...figures(finished, usage, escalationsByDay.get(day) ?? 0) });
  }
  const allUsage = [...usageByDay.values()].reduce(addUsage, NO_USAGE);
  const allEscalations = [...causes.values()].reduce((a, b) => a + b, 0);
  return {
    project,
    from: isoDay(window.firstDay),
    to: isoDay(window.lastDay),
    days,
    totals: figures(rows.finished, allUsage, allEscalations),
    escalationCauses: [...causes]
      .map(([cause, count]) => ({ cause, label: causeLabel(cause), count }))
      .sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause)),
    waiting: [...timeInStates(rows)]
      .filter(([state, ms]) => ms > 0 && !ENDS.has(state))
      .map(([state, ms]) => ({ state, ms }))
      .sort((a, b) => b.ms - a.ms || a.state.localeCompare(b.state)),
  };
}

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
const csvField = (value: string | number | null) => {
  const text = value === null ? "" : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** One of the report's tables as CSV, a header line first: the days (default), the waiting, the causes. */
export function outcomesCsv(report: Outcomes, table: OutcomeTable = "days"): string {
  const rows: (string | number | null)[][] =
    table === "waiting"
      ? [["state", "ms"], ...report.waiting.map((w) => [w.state, w.ms])]
      : table === "causes"
        ? [["cause", "label", "count"], ...report.escalationCauses.map((c) => [c.cause, c.label, c.count])]
        : [
            ["day", ...FIGURE_COLUMNS],
            ...report.days.map((day) => [day.day, ...FIGURE_COLUMNS.map((column) => day[column])]),
          ];
  return `${rows.map((row) => row.map(csvField).join(",")).join("\r\n")}\r\n`;
}

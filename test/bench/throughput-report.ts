/**
 * The throughput bench's report: its figures (JSON lines on stdout, `emit`) and where each issue's time went
 * (stderr), from each part's own record of the run.
 */
import { escalations } from "./escalation-causes.ts";
import { emit, percentile } from "./load.ts";
import {
  atLeast,
  busySpans,
  clip,
  covered,
  coveredWithin,
  type Edge,
  type JobLine,
  milestoneGaps,
  type Span,
  slotUse,
  stateSpans,
} from "./throughput-timeline.ts";

/** A span inside the model stand-in: a session's request, or the critic's (`critic`). */
export type ModelSpan = Span & { critic: boolean };

/** What one run found, from every part's own record. */
export type Run = {
  numbers: number[];
  slots: number;
  /** When each issue's label was sent. */
  labelled: Map<number, number>;
  edges: Edge[];
  /** The runners' log lines about jobs. */
  lines: JobLine[];
  requests: Map<number, ModelSpan[]>;
  ciRuns: Map<number, Span[]>;
  /** The Worker's process's CPU time over the run's wall time. */
  workerShare: number;
};

/** The figures (stdout) and where the time went (stderr). */
export function report(run: Run): void {
  const { slots, labelled, edges, requests, ciRuns } = run;
  const first = Math.min(...labelled.values());
  const mergedAt = new Map(edges.filter((e) => e.to === "merged").map((e) => [e.number, e.at]));
  const last = Math.max(...mergedAt.values());
  // An issue that escalated has no label → merged: the figures are the merged issues', and the rest counted.
  const numbers = run.numbers.filter((n) => mergedAt.has(n));
  emit({
    name: "factory_issues_not_merged",
    value: run.numbers.length - numbers.length,
    unit: "count",
    target: "0",
  });
  // Why those that escalated did: the counts by cause, and each issue's own reason on stderr.
  const escalated = escalations(edges);
  emit({
    name: "factory_escalations_by_cause",
    value: escalated.reasons.size,
    unit: "issues",
    target: "0",
    parts: Object.fromEntries(escalated.byCause),
  });
  if (escalated.reasons.size > 0)
    console.error(
      [
        "escalated, by cause:",
        ...escalated.byCause.map(([cause, count]) => `  ${count} × ${cause}`),
        ...[...escalated.reasons].map(
          ([number, reason]) => `  #${number}: ${reason ?? "(no reason recorded)"}`,
        ),
      ].join("\n"),
    );
  if (numbers.length === 0) return;
  const busy = busySpans(run.lines);
  const byIssue = groupBy(edges, (e) => e.number);
  const queuedOf = (number: number) => stateSpans(byIssue.get(number) ?? [], last).get("queued") ?? [];
  // Every slot at work: a queued issue waits for capacity, not for Conveyor.
  const full = atLeast(busy, slots);
  const perIssue = numbers.map((number) => {
    const life: Span = { start: labelled.get(number) ?? first, end: mergedAt.get(number) ?? last };
    const inModel = clip(requests.get(number) ?? [], life);
    const inCi = clip(ciRuns.get(number) ?? [], life);
    const total = life.end - life.start;
    return {
      total,
      inModel: covered(inModel),
      inCi: covered(inCi),
      overhead: total - covered([...inModel, ...inCi]),
      slotWait: coveredWithin(queuedOf(number), full),
    };
  });
  const p50s = (values: number[]) => percentile(values, 50) / 1000;
  emit({
    name: "factory_issues_per_minute",
    value: numbers.length / ((last - first) / 60_000),
    unit: "issues/min",
  });
  emit({
    name: "factory_overhead_per_issue_p50",
    value: p50s(perIssue.map((i) => i.overhead)),
    unit: "s",
    target: "<= 3",
  });
  emit({
    name: "factory_overhead_per_issue_without_slot_wait_p50",
    value: p50s(perIssue.map((i) => i.overhead - i.slotWait)),
    unit: "s",
  });
  const use = slotUse(busy, run.numbers.flatMap(queuedOf), slots, { start: first, end: last });
  emit({ name: "factory_slot_busy_share", value: use.busyShare, unit: "ratio" });
  emit({ name: "factory_slots_idle_while_jobs_wait_share", value: use.idleWhileWaitingShare, unit: "ratio" });
  const { workerShare } = run;
  emit({ name: "factory_worker_thread_share", value: workerShare, unit: "ratio" });
  // What staying current with a moving base cost: every update is another CI run and another critic round.
  const perIssueCount = (of: (number: number) => number) =>
    run.numbers.reduce((sum, n) => sum + of(n), 0) / run.numbers.length;
  const counts = {
    updates: perIssueCount((n) => byIssue.get(n)?.filter((e) => e.event === "branch_updated").length ?? 0),
    ci_runs: perIssueCount((n) => ciRuns.get(n)?.length ?? 0),
    critic_rounds: perIssueCount((n) => requests.get(n)?.filter((r) => r.critic).length ?? 0),
  };
  for (const [name, value] of Object.entries(counts))
    emit({ name: `factory_${name}_per_issue`, value, unit: "count" });
  const milestones = milestonesOf(run);
  console.error(describe({ perIssue, milestones, use, workerShare, slots }));
}

/** Each issue's first time at each step of its way, from the bench, D1, the runners, the stand-in and CI. */
function milestonesOf(run: Run): Map<number, Map<string, number>> {
  const all = new Map<number, Map<string, number>>();
  const mark = (number: number, name: string, at: number | undefined) => {
    const own = all.get(number) ?? new Map<string, number>();
    all.set(number, own);
    if (at !== undefined && Number.isFinite(at) && !own.has(name)) own.set(name, at);
  };
  for (const number of run.numbers) {
    mark(number, "label", run.labelled.get(number));
    const requests = run.requests.get(number) ?? [];
    const session = requests.filter((r) => !r.critic);
    const critic = requests.filter((r) => r.critic);
    mark(number, "first model request", Math.min(...session.map((r) => r.start)));
    mark(number, "last session answer", Math.max(...session.map((r) => r.end)));
    mark(number, "critic asked", critic[0]?.start);
    mark(number, "critic answered", critic[0]?.end);
    const ci = run.ciRuns.get(number) ?? [];
    mark(number, "CI started", ci[0]?.start);
    mark(number, "CI settled", ci[0]?.end);
  }
  for (const edge of [...run.edges].sort((a, b) => a.at - b.at)) mark(edge.number, edge.to, edge.at);
  for (const line of run.lines) mark(line.issue, line.msg, line.at);
  return all;
}

/** The way an issue takes, in order, as `milestonesOf` names its steps. */
const WAY = [
  "label",
  "queued",
  "claimed",
  "job started",
  "worktree ready",
  "session started",
  "first model request",
  "last session answer",
  "pushed",
  "job done",
  "awaiting_ci",
  "CI started",
  "CI settled",
  "awaiting_review",
  "critic asked",
  "critic answered",
  "merging",
  "merged",
];

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** Where the time went, for stderr: the p50 of each step of the way, and what limited the throughput. */
function describe(run: {
  perIssue: { total: number; inModel: number; inCi: number; overhead: number; slotWait: number }[];
  milestones: Map<number, Map<string, number>>;
  use: ReturnType<typeof slotUse>;
  workerShare: number;
  slots: number;
}): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const p50 = (values: number[]) => percentile(values, 50);
  const of = (key: "total" | "inModel" | "inCi" | "overhead" | "slotWait") =>
    seconds(p50(run.perIssue.map((i) => i[key])));
  const { use } = run;
  const limit =
    use.busyShare >= 0.9
      ? "the slots (busy)"
      : use.idleWhileWaitingShare > 0.1
        ? "the Worker (slots idle while jobs wait)"
        : "neither the slots nor dispatch: slots idle with no job waiting (the issues are past their sessions)";
  return [
    `per issue p50: label → merged ${of("total")}, in the model ${of("inModel")}, in CI ${of("inCi")}, queued with every slot busy ${of("slotWait")}, overhead ${of("overhead")}`,
    "the way, p50 per issue of each step (first time at each):",
    ...milestoneGaps(run.milestones, WAY, p50).map(({ from, to, ms }) => `  ${from} → ${to}: ${seconds(ms)}`),
    `slots: ${(use.busyShare * 100).toFixed(0)} % busy; idle while jobs waited ${(use.idleWhileWaitingShare * 100).toFixed(0)} % of slot-time; all ${run.slots} busy with jobs waiting ${(use.saturatedShare * 100).toFixed(0)} % of the time, a slot idle with none waiting ${(use.starvedShare * 100).toFixed(0)} %; workerd CPU ${(run.workerShare * 100).toFixed(0)} % of the window`,
    `limited by: ${limit}`,
  ].join("\n");
}

// Alone, with small sizes while developing: `node test/bench/throughput.ts issues=8`.

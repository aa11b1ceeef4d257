/**
 * Issues through the whole local factory (`startDemo`: the local forge, the Worker under wrangler dev, two
 * runner processes of four slots each running Claude Code in bubblewrap, the Messages-API stand-in answering
 * at once, CI that passes at once), each from its `backlog` label to its merge. Every session writes a module
 * of its own, commits and hands its branch to CI; the critic approves; Conveyor merges.
 *
 * Figures: issues merged per minute (from the first label to the last merge) and, per issue, label → merged
 * less the time it spent inside the model stand-in (the stand-in's own timing of each request: its sessions
 * and its critic) and inside CI. Beside them, what the runners' slots did meanwhile (their logs: claimed to
 * done), against the issues waiting for one (D1's `queued` spans), and the Worker process's CPU: busy slots
 * mean the slots are the limit, idle slots while jobs wait mean dispatch (the Worker) is.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_RULES } from "../../demo/agents-script.ts";
import { type Demo, startDemo } from "../../demo/orchestrator.ts";
import { LABELS } from "../../demo/project.ts";
import { PROJECT } from "../../demo/scenario.ts";
import type { CriticReport } from "../../src/critic/report.ts";
import { bash, type Rule, type ScriptRequest, text, use, write } from "../support/model/script.ts";
import type { RecordedRequest } from "../support/model/server.ts";
import { emit, percentile } from "./load.ts";
import { processGroupCpuMs } from "./proc.ts";
import {
  busySpans,
  clip,
  covered,
  type Edge,
  type JobLine,
  jobLines,
  milestoneGaps,
  type Span,
  slotUse,
  stateSpans,
} from "./throughput-timeline.ts";

const IMPLEMENT = /Implement issue #(\d+) of /;
/** Whose request it is: a session's prompt or the critic's brief names the issue. */
const ISSUE_OF = /Implement issue #(\d+) of |<issue number=\\?"(\d+)\\?"/;

const numberOf = (req: ScriptRequest) =>
  IMPLEMENT.exec(req.lastUserText)?.[1] ?? IMPLEMENT.exec(JSON.stringify(req.messages))?.[1] ?? "0";

/** A session writes its own module (no two pull requests conflict), commits it and hands it to CI. */
const SCRIPT: Rule[] = [
  {
    when: /^Implement issue #\d+ of /m,
    steps: [
      (req) => write(`src/bench-${numberOf(req)}.js`, `export const issue = ${numberOf(req)};\n`),
      (req) =>
        bash(
          `git add -A && git commit -qm 'Add src/bench-${numberOf(req)}.js' && printf 'PHASE:awaiting_ci\\n' > "$CONVEYOR_PHASE_FILE"`,
          "Commit and hand to CI",
        ),
      text("Done: the module is committed."),
    ],
  },
  ...AGENT_RULES,
  {
    forced: "report",
    steps: [
      use("report", {
        verdict: "APPROVE",
        summary: "Does what the issue asks.",
        findings: [],
      } satisfies CriticReport),
    ],
  },
];

const END_STATES = new Set(["merged", "escalated", "abandoned", "done"]);

export type ThroughputOptions = {
  issues?: number;
  runners?: number;
  slotsPerRunner?: number;
  timeoutMs?: number;
};

export async function benchThroughput({
  issues = 50,
  runners = 2,
  slotsPerRunner = 4,
  timeoutMs = 120_000 + issues * 10_000,
}: ThroughputOptions = {}): Promise<void> {
  const slots = runners * slotsPerRunner;
  // Local D1, Durable Objects and the forge in memory where the machine has it (docs/performance.md).
  const parent = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const dataDir = await mkdtemp(join(parent, "bench-throughput-"));
  const demo = await startDemo({
    dataDir,
    model: { kind: "stand-in" },
    script: SCRIPT,
    // As many sessions at once as there are slots; a base that moves with every merge updates the waiting
    // pull requests again and again, so the most updates the project allows.
    settings: { parallel: slots, maxUpdates: 20, dailyBudgetUsd: 10_000 },
    runners: { count: runners, concurrency: slotsPerRunner },
    ciCommand: "true",
  });
  try {
    const model = demo.model;
    if (!model) throw new Error("the stand-in did not start");
    await Promise.all([demo.runner, ...demo.otherRunners].map((runner) => runner.sandbox()));
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const numbers: number[] = [];
    for (let i = 0; i < issues; i++) {
      const { number } = await maintainer.createIssue({
        title: `Bench ${i}`,
        body: "Add a module.",
        labels: [],
      });
      numbers.push(number);
    }
    console.error(`throughput: ${issues} issues, ${runners} runners × ${slotsPerRunner} slots`);
    const ci = watchCi(demo);
    const cpuBefore = processGroupCpuMs(demo.worker.pid);
    const labelled = new Map<number, number>();
    for (const number of numbers) {
      labelled.set(number, Date.now());
      await maintainer.addLabels(number, [LABELS.backlog]);
    }
    const edges = await untilSettled(demo, numbers, timeoutMs);
    const cpuAfter = processGroupCpuMs(demo.worker.pid);
    ci.stop();

    const first = Math.min(...labelled.values());
    const mergedAt = new Map(edges.filter((e) => e.to === "merged").map((e) => [e.number, e.at]));
    const last = Math.max(...mergedAt.values());
    const requests = modelRequests(model.requests);
    const ciRuns = ci.runs(demo);
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
      };
    });
    emit({
      name: "factory_issues_per_minute",
      value: issues / ((last - first) / 60_000),
      unit: "issues/min",
    });
    emit({
      name: "factory_overhead_per_issue_p50",
      value:
        percentile(
          perIssue.map((i) => i.overhead),
          50,
        ) / 1000,
      unit: "s",
      target: "<= 3",
    });

    const lines = [demo.runner, ...demo.otherRunners].flatMap((r) =>
      jobLines(readFileSync(r.logFile, "utf8")),
    );
    const byIssue = groupBy(edges, (e) => e.number);
    const waiting = [...byIssue.values()].flatMap((own) => stateSpans(own, last).get("queued") ?? []);
    const use = slotUse(busySpans(lines), waiting, slots, { start: first, end: last });
    emit({ name: "factory_slot_busy_share", value: use.busyShare, unit: "ratio" });
    emit({
      name: "factory_slots_idle_while_jobs_wait_share",
      value: use.idleWhileWaitingShare,
      unit: "ratio",
    });
    const workerShare = (cpuAfter.workerd - cpuBefore.workerd) / (last - first);
    emit({ name: "factory_worker_thread_share", value: workerShare, unit: "ratio" });
    const milestones = milestonesOf({ numbers, labelled, edges, lines, requests, ciRuns });
    console.error(describe({ perIssue, milestones, use, workerShare, slots }));
  } finally {
    await demo.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Every edge of the issues, once each has reached an end state (all merged, or the bench fails saying where). */
async function untilSettled(demo: Demo, numbers: number[], timeoutMs: number): Promise<Edge[]> {
  const deadline = Date.now() + timeoutMs;
  const wanted = new Set(numbers);
  const edges: Edge[] = [];
  const state = new Map<number, string>();
  let rowid = 0;
  for (;;) {
    for (const edge of demo.d1.transitionsAfter(PROJECT, rowid)) {
      rowid = edge.rowid;
      if (!wanted.has(edge.number)) continue;
      edges.push(edge);
      state.set(edge.number, edge.to);
    }
    const ended = numbers.filter((n) => END_STATES.has(state.get(n) ?? "new"));
    if (ended.length === numbers.length) {
      const astray = numbers.filter((n) => state.get(n) !== "merged");
      if (astray.length > 0)
        throw new Error(`not merged: ${astray.map((n) => `#${n} ${state.get(n)}`).join(", ")}`);
      return edges;
    }
    if (Date.now() > deadline) {
      const open = numbers.filter((n) => !END_STATES.has(state.get(n) ?? "new"));
      throw new Error(`timed out: ${open.map((n) => `#${n} ${state.get(n) ?? "new"}`).join(", ")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A span inside the model stand-in: a session's request, or the critic's (`critic`). */
type ModelSpan = Span & { critic: boolean };

/** The stand-in's own timing of each request (arrival to the answer's end), per issue it was about. */
function modelRequests(requests: readonly RecordedRequest[]): Map<number, ModelSpan[]> {
  const spans = new Map<number, ModelSpan[]>();
  for (const { body, startedAt, endedAt } of requests) {
    const found = ISSUE_OF.exec(JSON.stringify(body ?? {}));
    const number = Number(found?.[1] ?? found?.[2]);
    if (!number || endedAt === undefined) continue;
    const span = { start: startedAt, end: endedAt, critic: found?.[2] !== undefined };
    spans.set(number, [...(spans.get(number) ?? []), span]);
  }
  return spans;
}

/** Each issue's first time at each step of its way, from the bench, D1, the runners, the stand-in and CI. */
function milestonesOf(run: {
  numbers: number[];
  labelled: Map<number, number>;
  edges: Edge[];
  lines: JobLine[];
  requests: Map<number, ModelSpan[]>;
  ciRuns: Map<number, Span[]>;
}): Map<number, Map<string, number>> {
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

/**
 * CI's runs as they happen, to the millisecond: the local forge runs in this process and records its runs
 * with Gitea's times (whole seconds), so each run is timed from when it shows to when it settles.
 */
function watchCi(demo: Demo) {
  const seen = new Map<number, { start: number; end?: number; pull: number }>();
  const look = () => {
    for (const run of demo.sample.forge.ciRuns()) {
      const known = seen.get(run.id) ?? { start: Date.now(), pull: run.pullNumber };
      if (known.end === undefined && run.status !== "pending" && run.status !== "running")
        known.end = Date.now();
      seen.set(run.id, known);
    }
  };
  const timer = setInterval(look, 5);
  return {
    stop: () => clearInterval(timer),
    /** Per issue (its pull request's runs), oldest first. */
    runs(of: Demo): Map<number, Span[]> {
      const issueOfPull = new Map(
        of.d1
          .issues(PROJECT)
          .flatMap((issue) => (issue.prNumber === null ? [] : [[issue.prNumber, issue.number] as const])),
      );
      const spans = new Map<number, Span[]>();
      for (const { start, end, pull } of seen.values()) {
        const number = issueOfPull.get(pull);
        if (number === undefined || end === undefined) continue;
        spans.set(number, [...(spans.get(number) ?? []), { start, end }]);
      }
      return spans;
    },
  };
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** Where the time went, for stderr: the p50 of each step of the way, and what limited the throughput. */
function describe(run: {
  perIssue: { total: number; inModel: number; inCi: number; overhead: number }[];
  milestones: Map<number, Map<string, number>>;
  use: ReturnType<typeof slotUse>;
  workerShare: number;
  slots: number;
}): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const p50 = (values: number[]) => percentile(values, 50);
  const of = (key: "total" | "inModel" | "inCi" | "overhead") =>
    seconds(p50(run.perIssue.map((i) => i[key])));
  const { use } = run;
  const limit =
    use.busyShare >= 0.9
      ? "the slots (busy)"
      : use.idleWhileWaitingShare > 0.1
        ? "the Worker (slots idle while jobs wait)"
        : "neither the slots nor dispatch: slots idle with no job waiting (the issues are past their sessions)";
  return [
    `per issue p50: label → merged ${of("total")}, in the model ${of("inModel")}, in CI ${of("inCi")}, overhead ${of("overhead")}`,
    "the way, p50 per issue of each step (first time at each):",
    ...milestoneGaps(run.milestones, WAY, p50).map(({ from, to, ms }) => `  ${from} → ${to}: ${seconds(ms)}`),
    `slots: ${(use.busyShare * 100).toFixed(0)} % busy; idle while jobs waited ${(use.idleWhileWaitingShare * 100).toFixed(0)} % of slot-time; all ${run.slots} busy with jobs waiting ${(use.saturatedShare * 100).toFixed(0)} % of the time, a slot idle with none waiting ${(use.starvedShare * 100).toFixed(0)} %; workerd CPU ${(run.workerShare * 100).toFixed(0)} % of the window`,
    `limited by: ${limit}`,
  ].join("\n");
}

// Alone, with small sizes while developing: `node test/bench/throughput.ts issues=8`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const options = Object.fromEntries(
    process.argv
      .slice(2)
      .map((arg) => arg.split("="))
      .map(([k, v]) => [k, Number(v)]),
  );
  await benchThroughput(options);
}

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
import { z } from "zod";
import { AGENT_RULES } from "../../demo/agents-script.ts";
import { type Demo, startDemo } from "../../demo/orchestrator.ts";
import { LABELS } from "../../demo/project.ts";
import { PROJECT } from "../../demo/scenario.ts";
import type { CriticReport } from "../../src/critic/report.ts";
import { UP_TO_DATE_SETTINGS, type UpToDateSetting } from "../../src/domain/up-to-date.ts";
import { bash, type Rule, type ScriptRequest, text, use, write } from "../support/model/script.ts";
import type { RecordedRequest } from "../support/model/server.ts";
import { processGroupCpuMs } from "./proc.ts";
import { type ModelSpan, report } from "./throughput-report.ts";
import { type Edge, jobLines, type Span } from "./throughput-timeline.ts";

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
  /** Keep the data directory (the forge, the Worker's state, the runners' logs) for a look: 1. */
  keep?: number;
  /** The project's `merge.upToDate`: `when_required` merges a behind pull request as it is (no protection here). */
  upToDate?: UpToDateSetting;
};

/** The command line's `name=value` options. */
const commandLine = z
  .object({
    issues: z.coerce.number().int().positive(),
    runners: z.coerce.number().int().positive(),
    slotsPerRunner: z.coerce.number().int().positive(),
    timeoutMs: z.coerce.number().int().positive(),
    keep: z.coerce.number().int(),
    upToDate: z.enum(UP_TO_DATE_SETTINGS),
  })
  .partial()
  .strict();

export async function benchThroughput({
  issues = 50,
  runners = 2,
  slotsPerRunner = 4,
  // Every merge sends the other open pull requests round again (docs/performance.md): minutes, not seconds.
  timeoutMs = 120_000 + issues * 30_000,
  keep = 0,
  upToDate = "always",
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
    settings: { parallel: slots, maxUpdates: 20, dailyBudgetUsd: 10_000, merge: { upToDate } },
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
    console.error(
      `throughput: ${issues} issues, ${runners} runners × ${slotsPerRunner} slots, merge.upToDate ${upToDate}`,
    );
    const ci = watchCi(demo);
    const cpuBefore = { ...processGroupCpuMs(demo.worker.pid), at: Date.now() };
    const labelled = new Map<number, number>();
    for (const number of numbers) {
      labelled.set(number, Date.now());
      await maintainer.addLabels(number, [LABELS.backlog]);
    }
    const edges = await untilSettled(demo, numbers, timeoutMs);
    const cpuAfter = { ...processGroupCpuMs(demo.worker.pid), at: Date.now() };
    ci.stop();

    const lines = [demo.runner, ...demo.otherRunners].flatMap((r) =>
      jobLines(readFileSync(r.logFile, "utf8")),
    );
    // Over the same window as the CPU: from the first label to the run's end.
    const workerShare = (cpuAfter.workerd - cpuBefore.workerd) / (cpuAfter.at - cpuBefore.at);
    report({
      numbers,
      slots,
      labelled,
      edges,
      lines,
      requests: modelRequests(model.requests),
      ciRuns: ci.runs(demo),
      workerShare,
    });
  } finally {
    await demo.stop();
    if (keep) console.error(`throughput: kept ${dataDir}`);
    else await rm(dataDir, { recursive: true, force: true });
  }
}

/** Every edge of the issues, once each has reached an end state or the time is up (those not merged: stderr). */
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
        console.error(`throughput: not merged: ${astray.map((n) => `#${n} ${state.get(n)}`).join(", ")}`);
      return edges;
    }
    if (Date.now() > deadline) {
      const open = numbers.filter((n) => !END_STATES.has(state.get(n) ?? "new"));
      console.error(`throughput: timed out: ${open.map((n) => `#${n} ${state.get(n) ?? "new"}`).join(", ")}`);
      return edges;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

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

/**
 * CI's runs as they happen, to 20 ms: the local forge runs in this process and records its runs
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
  const timer = setInterval(look, 20);
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = Object.fromEntries(process.argv.slice(2).map((arg) => arg.split("=")));
  await benchThroughput(commandLine.parse(options));
}

/**
 * A fleet on one project, simulated at the runner API against the local Worker: `sessions` sessions at work at
 * once, each heartbeating at the runner's own period (a third of the lease) and reporting its activity and
 * usage every `activityMs`, while new jobs are queued at `claimsPerSecond` and taken by `slots` long-polling
 * runner slots, and as many of the oldest sessions complete. Each runner's client coalesces its sessions'
 * heartbeats and events into reports as the runner's does (runner/report-batch.ts), the heartbeats on the
 * runner's grid (runner/lease.ts `nextBeatAt`). Measured over `seconds` once the fleet is full: each runner
 * call's round trip (a report carrying heartbeats, one carrying events), each job's time from its enqueue (the
 * triage's answer) to its arrival at a slot, and the Worker process's CPU over the window: in the local runtime
 * the Worker, its Durable Objects and D1 share one thread, so its CPU share is how close that thread is to its
 * ceiling. Run on the Worker under Miniflare directly (`npm run bench`, and alone): no dev proxy stands between
 * the runners and the Worker, as none does on Cloudflare.
 */
import { RunnerApi } from "../../runner/api.ts";
import { nextBeatAt } from "../../runner/lease.ts";
import type { Claim } from "../../src/runner-api/contract.ts";
import type { LocalWorker } from "../support/worker.ts";
import { benchProject } from "./forge-project.ts";
import { emit, percentile } from "./load.ts";
import { groupOpenFiles, groupOpenPaths, processGroupCpuMs } from "./proc.ts";
import { WorkerProfiler } from "./profile.ts";

export type FleetOptions = {
  sessions?: number;
  slots?: number;
  claimsPerSecond?: number;
  seconds?: number;
  /** Slots per runner (each runner registers once and claims with its own token). */
  slotsPerRunner?: number;
  activityMs?: number;
  leaseMs?: number;
};

/** A Durable Object's database, WAL and shared memory, open while the object is in memory. */
const OBJECT_FILES = /\/v3\/do\/.*\.sqlite(-wal|-shm)?$/;

type Running = { claim: Claim; api: RunnerApi; nextBeat: number; nextEvents: number; turns: number };

export async function benchFleet(
  worker: LocalWorker,
  {
    sessions = 1_000,
    slots = 250,
    claimsPerSecond = 100,
    seconds = 30,
    slotsPerRunner = 5,
    activityMs = 5_000,
    leaseMs = 60_000,
  }: FleetOptions = {},
): Promise<void> {
  const project = "bench-fleet";
  // The sessions report spend as they go: a budget the fleet cannot reach, or dispatch pauses at the daily cap.
  const budgets = { dailyBudgetUsd: 100_000, issueBudgetUsd: 100_000 };
  const bench = await benchProject(worker.url, project, {
    parallel: sessions,
    jobs: { leaseMs },
    ...budgets,
  });
  const { operator } = bench;
  const running: Running[] = [];
  let stopping = false;
  try {
    const issues = sessions + Math.ceil(claimsPerSecond * seconds * 1.2);
    console.error(`fleet: ${issues} forge issues, ${sessions} sessions, ${slots} slots`);
    const numbers = await inParallel(issues, 8, (i) => bench.issue(`Fleet ${i}`));

    const runners: RunnerApi[] = [];
    for (let i = 0; i < Math.ceil(slots / slotsPerRunner); i++) {
      // No host report: the measured calls are the job's, not the supervisor's samples.
      const api = new RunnerApi(worker.url);
      api.health = () => ({});
      const registrationToken = await operator.registrationToken();
      api.token = (await api.register({ registrationToken, name: `fleet-${i}`, version: "bench" })).token;
      runners.push(api);
    }

    let measuring = false;
    // A job may reach its slot before the triage's answer reaches the bench: both are kept, and compared at the end.
    const queuedAt = new Map<number, number>();
    const arrivedAt = new Map<number, number>();
    const figures = {
      heartbeat: [] as number[],
      events: [] as number[],
      claim: [] as number[],
      complete: [] as number[],
    };
    const errors: string[] = [];
    // Each runner call's round trip, as the runners' fetch sees it: a report is one call for many sessions.
    let runnerCalls = 0;
    const unwatch = watchReports(
      () => measuring,
      (ms, report) => {
        runnerCalls++;
        if (ms === null) return;
        if (report?.some((job) => job.heartbeat)) figures.heartbeat.push(ms);
        if (report?.some((job) => (job.events?.length ?? 0) > 0)) figures.events.push(ms);
      },
    );
    const timed = async (into: number[] | null, call: () => Promise<unknown>) => {
      const t = performance.now();
      // A call counts if it was made in the window, whenever it is answered.
      const counted = measuring;
      try {
        await call();
        if (counted) into?.push(performance.now() - t);
      } catch (error) {
        if (!stopping) errors.push(String(error));
      }
    };

    // Each session's heartbeats on the runner's grid, as its lease keeper beats; its turns on a period of their
    // own with a random phase, so that they spread as a fleet's do.
    const beatMs = leaseMs / 3;
    const start = (claim: Claim, api: RunnerApi) => {
      const now = performance.now();
      running.push({
        claim,
        api,
        nextBeat: nextBeatAt(now, beatMs),
        nextEvents: now + Math.random() * activityMs,
        turns: 0,
      });
      // The runner confirms a lease with its first heartbeat, at once.
      void timed(null, () => api.heartbeat(claim.job.id, claim.leaseToken, { urgent: true }));
    };
    const ticker = setInterval(() => {
      const now = performance.now();
      for (const session of running) {
        const { claim, api } = session;
        if (session.nextBeat <= now) {
          session.nextBeat = nextBeatAt(session.nextBeat, beatMs);
          void timed(null, () => api.heartbeat(claim.job.id, claim.leaseToken));
        }
        if (session.nextEvents <= now) {
          session.nextEvents = now + activityMs;
          session.turns++;
          void timed(null, () =>
            api.events(claim.job.id, claim.leaseToken, sessionEvents(claim, session.turns)),
          );
        }
      }
    }, 10);

    const slotLoops = Array.from({ length: slots }, async (_, i) => {
      const api = runners[Math.floor(i / slotsPerRunner)] as RunnerApi;
      while (!stopping) {
        const claim = await api.claim({ waitMs: 10_000, holding: [], projects: [project] }).catch((error) => {
          if (!stopping) errors.push(String(error));
          return null;
        });
        if (!claim) continue;
        if (measuring) arrivedAt.set(claim.job.issue.number, performance.now());
        start(claim, api);
      }
    });

    // The local runtime's own limit, said beside a failure: a workerd out of descriptors drops calls.
    const openFiles = () =>
      `workerd open files ${JSON.stringify(groupOpenFiles(worker.pid))}: objects' SQLite files ${groupOpenPaths(worker.pid, "workerd", OBJECT_FILES)} (three an object in memory), sockets ${groupOpenPaths(worker.pid, "workerd", /^socket:/)}`;
    const triage = async (number: number) => {
      await operator.triage(project, number).catch((error: unknown) => {
        throw new Error(`triage of #${number}: ${String(error)}; ${openFiles()}`);
      });
      queuedAt.set(number, performance.now());
    };
    // Fill the fleet as fast as the Worker takes it.
    let next = 0;
    await inParallel(sessions, 8, () => triage(numbers[next++] as number));
    const fillBy = performance.now() + 120_000;
    while (running.length < sessions) {
      if (performance.now() > fillBy)
        throw new Error(
          `fleet: ${running.length} of ${sessions} sessions after 2 minutes; ${errors.length} calls failed: ${errors[0]}; ${openFiles()}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
    console.error(`fleet: ${sessions} sessions running`);
    // A period of heartbeats before measuring, so that the fill's burst is behind.
    await new Promise((r) => setTimeout(r, Math.min(beatMs, 10_000)));

    const profiler = await WorkerProfiler.connect(worker.inspectorPort);
    await profiler.start();
    measuring = true;
    const cpuBefore = processGroupCpuMs(worker.pid);
    // workerd's descriptors over the window: calls in flight and objects in memory hold them, and at its
    // limit it drops calls.
    const descriptors = { peak: 0, limit: Number.NaN };
    const watchDescriptors = setInterval(() => {
      const [files] = groupOpenFiles(worker.pid);
      if (files && files.open > descriptors.peak)
        Object.assign(descriptors, { peak: files.open, limit: files.limit });
    }, 1_000);
    const began = performance.now();
    const pending: Promise<unknown>[] = [];
    for (let tick = 0; performance.now() - began < seconds * 1000; tick++) {
      const due = began + (tick * 1000) / claimsPerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const number = numbers[next++];
      if (number === undefined) break;
      // The oldest session finishes as a new job is queued: the fleet stays at `sessions`.
      const done = running.shift();
      if (done) {
        const { claim, api } = done;
        pending.push(
          timed(figures.complete, () =>
            api.complete(claim.job.id, { leaseToken: claim.leaseToken, phase: "failed", reason: "bench" }),
          ),
        );
      }
      // A triage lost in the window is counted with the failed calls: the figures and the descriptors' peak
      // still say what the run met, and `npm run bench` goes on to the next bench.
      pending.push(answered(triage(number)).catch((error: unknown) => errors.push(String(error))));
    }
    // The window is over: the sessions' own calls stop, or a thread they keep full (their steady load alone can
    // exceed it) never answers the profiler behind them. The slots go on claiming the window's jobs.
    clearInterval(ticker);
    console.error(`fleet: window over, ${pending.length} calls to answer`);
    await Promise.all(pending);
    const wallMs = performance.now() - began;
    const cpuAfter = processGroupCpuMs(worker.pid);
    clearInterval(watchDescriptors);
    measuring = false;
    console.error("fleet: the window's calls answered");
    // The inspector is served on the thread the fleet saturates: past the bound the run goes on without the
    // shares, rather than holding `npm run bench` for as long as the thread's backlog lasts.
    const profile = await answered(profiler.stop(), PROFILE_MS).catch((error: unknown) => {
      console.error(`fleet: no profile: ${String(error)}`);
      return null;
    });
    profiler.close();
    for (const [number, arrived] of arrivedAt) {
      const queued = queuedAt.get(number);
      if (queued !== undefined) figures.claim.push(Math.max(0, arrived - queued));
    }
    stopping = true;
    unwatch();
    if (errors.length > 0) console.error(`fleet: ${errors.length} calls failed, first: ${errors[0]}`);
    console.error(`fleet: ${openFiles()}`);

    const target = "< 50";
    emit({ name: "fleet_heartbeat_p99", value: percentile(figures.heartbeat, 99), unit: "ms", target });
    emit({ name: "fleet_claim_p99", value: percentile(figures.claim, 99), unit: "ms", target });
    emit({ name: "fleet_events_p99", value: percentile(figures.events, 99), unit: "ms", target });
    emit({ name: "fleet_heartbeat_p50", value: percentile(figures.heartbeat, 50), unit: "ms" });
    emit({ name: "fleet_claim_p50", value: percentile(figures.claim, 50), unit: "ms" });
    emit({ name: "fleet_events_p50", value: percentile(figures.events, 50), unit: "ms" });
    emit({ name: "fleet_complete_p99", value: percentile(figures.complete, 99), unit: "ms" });
    emit({ name: "fleet_runner_calls_per_second", value: (runnerCalls * 1000) / wallMs, unit: "1/s" });
    emit({
      name: "fleet_worker_thread_share",
      value: (cpuAfter.workerd - cpuBefore.workerd) / wallMs,
      unit: "ratio",
    });
    // The ProjectDO's own JavaScript (and its synchronous SQLite) as a share of the window: what one object's
    // thread would carry in production, where the routes and the other objects run elsewhere.
    if (profile) {
      const share = (owner: string) => (profile.byOwner[owner] ?? 0) / profile.wallMs;
      emit({
        name: "fleet_projectdo_thread_share",
        value: share("project_do"),
        unit: "ratio",
        target: "< 1",
      });
      emit({ name: "fleet_issuedo_thread_share", value: share("issue_do"), unit: "ratio" });
      emit({ name: "fleet_worker_routes_thread_share", value: share("worker"), unit: "ratio" });
      console.error(`fleet: profile ${JSON.stringify(profile)}`);
    }
    emit({ name: "fleet_failed_calls", value: errors.length, unit: "calls", target: "0" });
    emit({
      name: "fleet_worker_open_files_peak",
      value: descriptors.peak,
      unit: "fds",
      target: `< ${descriptors.limit}`,
    });
    await Promise.race([Promise.all(slotLoops), new Promise((r) => setTimeout(r, 15_000))]);
  } finally {
    stopping = true;
    await bench.close();
  }
}

type ReportedJob = { heartbeat?: boolean; events?: unknown[] };

/**
 * Times every runner API call this process makes (all of them the fleet's runners') while `counting` holds as it
 * is made: `report` gets the round trip (null for a claim that took a job) and, for a `/runner/v1/report`, the
 * jobs it carried. Returns the undo.
 */
function watchReports(
  counting: () => boolean,
  report: (ms: number | null, jobs: ReportedJob[] | null) => void,
): () => void {
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.includes("/runner/v1/") || !counting()) return original(input, init);
    const t = performance.now();
    const response = await original(input, init);
    const jobs = url.endsWith("/runner/v1/report")
      ? (JSON.parse(String(init?.body)) as { jobs: ReportedJob[] }).jobs
      : null;
    // A claim that took a job is counted (its time is the claim figure's, from the job's enqueue); a poll's
    // empty answer is not: it is the long poll's wait.
    if (!url.endsWith("/runner/v1/claim")) report(performance.now() - t, jobs);
    else if (response.status === 200) report(null, null);
    return response;
  };
  return () => {
    globalThis.fetch = original;
  };
}

/** What a session reports after a turn: its activity, and its usage so far. */
function sessionEvents(claim: Claim, turns: number) {
  const sessionId = `fleet-${claim.job.id}`;
  return [
    {
      kind: "activity" as const,
      items: [{ at: Date.now(), kind: "tool" as const, text: `Bash npm test (turn ${turns})` }],
    },
    {
      kind: "usage" as const,
      sessionId,
      usage: {
        inputTokens: 10 * turns,
        outputTokens: 200 * turns,
        cacheReadTokens: 20_000 * turns,
        cacheWriteTokens: 2_000 * turns,
        usd: 0.02 * turns,
        turns,
      },
    },
  ];
}

/**
 * A runner's calls give up after 30 s (runner/api.ts); the operator's triage has no limit of its own, and on a
 * local workerd out of descriptors one can wait for minutes: past as long, it counts as failed.
 */
const ANSWER_MS = 30_000;
/** How long the profile's stop may take once the window's calls are answered. */
const PROFILE_MS = 120_000;
function answered<T>(call: Promise<T>, ms = ANSWER_MS): Promise<T> {
  return Promise.race([
    call,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms).unref(),
    ),
  ]);
}

async function inParallel<T>(count: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let i = next++; i < count; i = next++) out[i] = await make(i);
    }),
  );
  return out;
}

// Alone, with small sizes while developing: `node test/bench/fleet.ts sessions=20 slots=10 claimsPerSecond=5 seconds=5`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { startMiniflareWorker } = await import("../support/miniflare-worker.ts");
  const options = Object.fromEntries(
    process.argv
      .slice(2)
      .map((arg) => arg.split("="))
      .map(([k, v]) => [k, Number(v)]),
  );
  // FLEET_WORKER_LOG: where Miniflare's and workerd's output goes, to read after a failed call.
  const logFile = process.env.FLEET_WORKER_LOG;
  const worker = await startMiniflareWorker({ stateParent: "/dev/shm", ...(logFile && { logFile }) });
  // Interrupted (a timeout's SIGTERM), the Worker's process group goes too.
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => void worker.stop().finally(() => process.exit(1)));
  try {
    await benchFleet(worker, options);
  } finally {
    await worker.stop();
  }
}

/**
 * Chaos: the demo's factory (local forge and CI, the Worker under wrangler dev, the real Claude Agent SDK
 * binary against the stand-in, one runner process) runs issues #1 (the critic asks for changes), #3 (CI red)
 * and #4 (escalates) while the runner is SIGKILLed at random moments and restarted, several times, and the
 * Worker is restarted once on the same persisted state, with the maintainer's reply to #4 posted while it is
 * down (its webhook is lost: only reconciliation, on the project's alarm, can see it).
 *
 * What must hold, read from the forge's own records and from the Worker's: every issue merged exactly once by
 * exactly one pull request, no branch with two pull requests; no job leased to two runners at once; no lease
 * handed to a runner after it hung up (every runner process goes through its own ledger proxy, and the
 * Worker's jobs table is sampled for leases nobody received).
 *
 * The randomness is seeded: the seed is printed, and `CHAOS_SEED=<n>` replays a run's kill schedule (the
 * moments are relative to each runner's start, so timing still varies from run to run).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from "vitest";
import { runScenario, type ScenarioRun } from "../../../demo/drive.ts";
import { type Demo, startDemo } from "../../../demo/orchestrator.ts";
import { ISSUES, PROJECT } from "../../../demo/scenario.ts";
import { pullRequests } from "../../../demo/summary.ts";
import { type Lease, LeaseLedger } from "../runner/support/lease-ledger.ts";
import { CHAOS_ISSUES, CHAOS_SCRIPT } from "./support/chaos-script.ts";
import { seededRandom } from "./support/seeded-random.ts";
import { type WorkerLease, WorkerLeaseSampler } from "./support/worker-leases.ts";

const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = seededRandom(SEED);
/** Between `min` and `max` ms, from the seeded generator. */
const between = (min: number, max: number) => Math.round(min + random() * (max - min));

const KILLS = 3;
const LEASE_MS = 10_000;
const CONFIRM_MS = 5_000;
/** How long after its runner died a claim's first pass may still lease (see the dead-runner test). */
const FIRST_PASS_SLACK_MS = 2_000;
const SETTINGS = {
  // The least each may be: a killed runner's leases run out soonest, a lost webhook is found soonest.
  jobs: { leaseMs: LEASE_MS, confirmMs: CONFIRM_MS, maxAttempts: 10 },
  reconcile: { periodMs: 10_000 },
};

/** One runner process: its ledger proxy (its only way to the Worker), when it started, when it was killed. */
type RunnerLife = { index: number; ledger: LeaseLedger; startedAt: number; killedAt: number | null };

let dataDir = "";
let demo: Demo | undefined;
let run: ScenarioRun;
const lives: RunnerLife[] = [];
let sampler: WorkerLeaseSampler | undefined;
let workerDown: { from: number; to: number } | null = null;
let keep = false;

async function newLife(workerUrl: string): Promise<RunnerLife> {
  const life = { index: lives.length + 1, ledger: await LeaseLedger.start(workerUrl), startedAt: Date.now() };
  lives.push({ ...life, killedAt: null });
  return lives[lives.length - 1] as RunnerLife;
}

/** Resolves once the runner process logged that it started (it may wait for a Worker that is down). */
async function started(logFile: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await readFile(logFile, "utf8").catch(() => "")).includes('"msg":"runner started"')) {
    if (Date.now() > deadline) throw new Error(`the runner did not start; see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once the process holds a lease (a session or a push under way), or after `timeoutMs`. */
async function busy(life: RunnerLife, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!life.ledger.leases.some((lease) => lease.end === null) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Kills the runner `KILLS` times and starts it again. Each kill comes at a random moment: either some seconds
 * after the process started (whatever it does then: idle in a claim, starting a session), or shortly after it
 * holds a lease (mid-session, mid-push, while it reports).
 */
async function killRepeatedly(chaos: Demo): Promise<void> {
  for (let kill = 1; kill <= KILLS; kill++) {
    const life = lives.at(-1) as RunnerLife;
    await started(chaos.runner.logFile);
    if (random() < 0.6) {
      await busy(life, 20_000);
      await new Promise((resolve) => setTimeout(resolve, between(0, 2_500)));
    } else {
      await new Promise((resolve) => setTimeout(resolve, between(1_000, 6_000)));
    }
    await chaos.runner.kill();
    life.killedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, between(0, 1_500)));
    const next = await newLife(chaos.worker.url);
    await chaos.restartRunner({ logName: `runner-${next.index}.log`, workerUrl: next.ledger.url });
  }
}

beforeAll(async () => {
  console.log(`chaos seed ${SEED} (CHAOS_SEED=${SEED} replays it)`);
  dataDir = await mkdtemp(join(tmpdir(), "conveyor-chaos-"));
  demo = await startDemo({
    dataDir,
    model: { kind: "stand-in" },
    script: CHAOS_SCRIPT,
    settings: SETTINGS,
    runnerWorkerUrl: async (url) => (await newLife(url)).ledger.url,
  });
  const chaos = demo;
  sampler = WorkerLeaseSampler.start(join(dataDir, "worker"));
  const kills = killRepeatedly(chaos);
  // Awaited below; handled here so a failed kill does not count as unhandled while the scenario runs.
  kills.catch(() => {});
  try {
    run = await runScenario(chaos, {
      print: () => {},
      timeoutMs: 240_000,
      replyToAny: false,
      issues: ISSUES.filter((issue) => CHAOS_ISSUES.includes(issue.number)),
      aroundReply: (_, post) =>
        chaos.restartWorker(async () => {
          const from = Date.now();
          await post();
          workerDown = { from, to: Date.now() };
        }),
    });
  } finally {
    // Also when the scenario failed: no runner is started after the demo stops.
    await kills;
  }
  sampler.stop();
  // What the kills hit: the leases each killed process held (sessions, pushes cut short), for the record.
  const hit = lives
    .filter((life) => life.killedAt !== null)
    .map((life) => life.ledger.leases.filter((lease) => lease.end === null).length);
  console.log(
    `chaos seed ${SEED}: scenario ${((Date.now() - run.startedAt) / 1000).toFixed(1)} s, ${KILLS} kills ` +
      `holding ${hit.join(", ")} lease(s), ${sampler.leases.length} leases granted`,
  );
}, 300_000);

beforeEach(() => {
  onTestFailed(() => {
    keep = true;
  });
});

afterAll(async () => {
  sampler?.stop();
  await demo?.stop();
  await Promise.all(lives.map((life) => life.ledger.close()));
  if (keep) console.log(`chaos seed ${SEED}: state and logs kept in ${dataDir}`);
  else await rm(dataDir, { recursive: true, force: true });
});

const allLeases = () => lives.flatMap((life) => life.ledger.leases.map((lease) => ({ life, lease })));

/**
 * When the Worker let go of a lease: its end as the runner heard it or as the Worker recorded it (a runner
 * killed right after reporting never hears the answer), or the end of its last extension (sooner if never
 * confirmed).
 */
function releasedAt(lease: Lease): number {
  if (lease.endedAt !== null) return lease.endedAt;
  const ended = sampler?.ended.get(lease.token);
  if (ended !== undefined) return Math.min(ended, lease.lastExpiry);
  if (lease.heartbeats === 0) return Math.min(lease.lastExpiry, lease.grantedAt + CONFIRM_MS);
  return lease.lastExpiry;
}

describe("the demo scenario under chaos", () => {
  it("killed the runner several times and restarted the Worker once, replying while it was down", () => {
    expect(lives.filter((life) => life.killedAt !== null)).toHaveLength(KILLS);
    expect(workerDown).not.toBeNull();
    expect(run.replies.map((reply) => reply.number)).toEqual([4]);
  });

  it("merges every issue exactly once, each by its one pull request", async () => {
    const chaos = demo as Demo;
    const rows = chaos.d1.issues(PROJECT).filter((row) => CHAOS_ISSUES.includes(row.number));
    expect(rows.map((row) => [row.number, row.state])).toEqual(CHAOS_ISSUES.map((n) => [n, "merged"]));
    const pulls = await pullRequests(chaos);
    for (const row of rows) {
      const own = pulls.filter((pull) => pull.branch === row.branch);
      expect(
        own.map((pull) => [pull.number, pull.merged]),
        `#${row.number}`,
      ).toEqual([[row.prNumber, true]]);
    }
    // No pull request from anywhere else either (a doubled one on another branch name).
    expect(pulls).toHaveLength(CHAOS_ISSUES.length);
    const merges = run.transitions.filter((t) => t.to === "merged").map((t) => t.number);
    expect(merges.sort()).toEqual(CHAOS_ISSUES);
  });

  it("never leases a job, nor two jobs of one issue, to two runners at once", () => {
    // Per issue: no job of an issue starts while another job of it is leased, and a job is one issue's.
    // Agent runs (an escalation's triage, the scenario's agents) hold leases too, of no chaos issue.
    const byIssue = Map.groupBy(
      allLeases()
        .map(({ lease }) => lease)
        .filter((lease) => CHAOS_ISSUES.includes(lease.issue)),
      (lease) => lease.issue,
    );
    for (const [issue, leases] of byIssue) {
      leases.sort((a, b) => a.grantedAt - b.grantedAt);
      let heldUntil = Number.NEGATIVE_INFINITY;
      for (const [i, lease] of leases.entries()) {
        expect(
          lease.grantedAt,
          `#${issue}: lease ${i + 1} (${lease.jobId}) granted while another was held`,
        ).toBeGreaterThanOrEqual(heldUntil);
        heldUntil = Math.max(heldUntil, releasedAt(lease));
      }
    }
    expect(byIssue.size).toBe(CHAOS_ISSUES.length);
  });

  it("never hands a lease to a runner that was already dead", () => {
    // What each process received, it received while it lived.
    for (const { life, lease } of allLeases()) {
      expect(lease.grantedAt).toBeLessThanOrEqual(life.killedAt ?? Number.POSITIVE_INFINITY);
    }
    // What the Worker leased that no process received: only a claim that was answered as its runner died, in
    // the claim's first pass (authentication, D1 reads: done within the slack even on a loaded machine). A claim
    // that waited must lease nothing; wrangler dev never tells the Worker that its client hung up.
    const received = new Set(allLeases().map(({ lease }) => lease.token));
    const hungUp = lives.flatMap((life) => life.ledger.hungUpClaims);
    const unreceived = (sampler as WorkerLeaseSampler).leases.filter((lease) => !received.has(lease.token));
    const toTheDead = unreceived.filter(
      (lease: WorkerLease) =>
        !hungUp.some(
          (claim) => claim.sentAt <= lease.leasedAt && lease.leasedAt <= claim.hungUpAt + FIRST_PASS_SLACK_MS,
        ),
    );
    const timeline = lives.map(({ index, startedAt, killedAt, ledger }) => ({
      index,
      startedAt,
      killedAt,
      hungUp: ledger.hungUpClaims,
    }));
    expect(toTheDead, `runner processes: ${JSON.stringify(timeline)}`).toEqual([]);
    expect((sampler as WorkerLeaseSampler).samples).toBeGreaterThan(0);
  });

  it("resumes the escalated session with the reply sent while the Worker was down (reconciliation)", () => {
    const chaos = demo as Demo;
    const reply = ISSUES.find((issue) => issue.number === 4)?.reply ?? "";
    const deliveries = chaos.sample.forge
      .deliveries()
      .filter((d) => d.event === "issue_comment" && d.body.includes(reply));
    expect(deliveries).toHaveLength(1);
    // The forge tried and got no answer: the webhook is lost.
    expect(deliveries[0]).toMatchObject({ status: null, error: expect.any(String) });
    // Leaving `escalated` (its triage's proposal is recorded in it first).
    const resumed = run.transitions.find(
      (t) => t.number === 4 && t.from === "escalated" && t.to !== "escalated",
    );
    expect(resumed).toMatchObject({ to: "revising", event: "human_reply", cause: "cron" });
    // The session got the reply.
    expect(chaos.model?.requests.some((r) => JSON.stringify(r.body?.messages ?? []).includes(reply))).toBe(
      true,
    );
  });
});

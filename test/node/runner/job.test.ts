import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Script, ScriptedDriver } from "../../../runner/drivers/scripted.ts";
import { git } from "../../../runner/git/exec.ts";
import { runJob } from "../../../runner/job.ts";
import type { Claim } from "../../../src/runner-api/contract.ts";
import { tempDir, type Upstream } from "../git/support.ts";
import { upstreamTemplate } from "../git/upstream-template.ts";
import { jobContext, makeJob, type TestContext, testSandbox } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";
import { running } from "./support/processes.ts";

let root = "";
let upstream: Upstream;
let worker: FakeWorker;
let cloneUrl = "";

const template = upstreamTemplate();

beforeEach(async () => {
  root = await tempDir("runner-job");
  upstream = await template.copyTo(root);
  cloneUrl = `file://${upstream.path}`;
  worker = await FakeWorker.start();
});

afterEach(async () => {
  expect(worker.violations).toEqual([]);
  await worker.close();
  await rm(root, { recursive: true, force: true });
});

async function context(script: Script): Promise<TestContext> {
  const ctx = jobContext({
    workDir: join(root, "work"),
    workerUrl: worker.url,
    token: worker.issueToken(),
    driver: () => new ScriptedDriver(script, testSandbox()),
  });
  return ctx;
}

/** Enqueues a job for issue 7, claims it as the runner would, and runs it. */
async function run(
  ctx: TestContext,
  overrides: Parameters<typeof makeJob>[0] | { id: string },
  shutdown?: AbortSignal,
) {
  const claim = await claimJob(ctx, overrides);
  await runJob(ctx, claim, shutdown ?? new AbortController().signal);
  return claim;
}

async function claimJob(
  ctx: TestContext,
  overrides: { id: string } & Partial<Parameters<typeof makeJob>[0]>,
) {
  worker.enqueue(makeJob({ cloneUrl, ...overrides }));
  const claim = await ctx.api.claim({ waitMs: 0, holding: [] });
  if (!claim) throw new Error("nothing to claim");
  return claim;
}

const kinds = (jobId: string) =>
  (worker.events.get(jobId) ?? []).map((e) => e.kind).filter((k) => k !== "log");

describe("a session that ends awaiting CI", () => {
  it("commits leftovers, pushes the branch and reports session, usage, pushed, then complete", async () => {
    const ctx = await context({
      implement: [
        { write: "greeting.txt", content: "hello\n" },
        { run: 'git add greeting.txt && git commit -qm "Add greeting"' },
        { write: "notes.txt", content: "left uncommitted\n" },
        { phase: "awaiting_ci" },
      ],
    });
    const claim = await run(ctx, { id: "job-1" });

    const pushed = await upstream.sha("conveyor/7");
    const outcome = worker.outcome("job-1");
    expect(outcome).toMatchObject({ kind: "complete", body: { phase: "awaiting_ci", branch: "conveyor/7" } });
    expect(outcome?.kind === "complete" && outcome.body).toMatchObject({
      leaseToken: claim.leaseToken,
      headSha: pushed,
      sessionId: expect.stringMatching(/^scripted-/),
    });
    expect(kinds("job-1")).toEqual(["session", "activity", "activity", "activity", "usage", "pushed"]);
    const steps = worker.events.get("job-1")?.flatMap((e) => (e.kind === "activity" ? e.items : []));
    expect(steps?.map((s) => s.text)).toEqual([
      "Write greeting.txt",
      'Bash git add greeting.txt && git commit -qm "Add greeting"',
      "Write notes.txt",
    ]);
    expect(worker.events.get("job-1")?.find((e) => e.kind === "pushed")).toEqual({
      kind: "pushed",
      branch: "conveyor/7",
      headSha: pushed,
    });
    // Both the agent's commit and the leftovers reached the remote branch.
    const log = await git(["-C", upstream.path, "log", "--format=%s", "main..conveyor/7"]);
    expect(log.trim().split("\n")).toEqual(["Conveyor: uncommitted work on #7", "Add greeting"]);
    // Every job call carried the current lease token: none was fenced.
    expect(worker.calls.filter((c) => c.jobId === "job-1").every((c) => c.status < 300)).toBe(true);
    expect(worker.events.get("job-1")?.some((e) => e.kind === "log" && e.message.includes("pushed"))).toBe(
      true,
    );
    expect(ctx.holdings.list()).toEqual(["demo#7"]);
  });

  it("keeps the phase file outside the worktree and nothing of the remote in the git config", async () => {
    const ctx = await context({
      implement: [{ run: 'echo "$CONVEYOR_PHASE_FILE" > "$HOME/phase-path"' }, { phase: "done" }],
    });
    await run(ctx, { id: "job-1" });

    const worktree = ctx.workspace.worktreePath({ repoKey: "acme/widgets", issueNumber: 7 });
    const phaseFile = (await readFile(join(ctx.layout.agentHome("demo", 7), "phase-path"), "utf8")).trim();
    expect(phaseFile).toBe(ctx.layout.phaseFile("demo", 7));
    expect(relative(worktree, phaseFile).startsWith("..")).toBe(true);
    const config = await readFile(join(ctx.workspace.mirrorPath("acme/widgets"), "config"), "utf8");
    expect(config).not.toContain(upstream.path);
    expect(config).not.toMatch(/credential|remote|user/);
    expect(worker.outcome("job-1")).toMatchObject({ kind: "complete", body: { phase: "done" } });
  });
});

describe("the phase decides the report", () => {
  it("reports a dry exit when the session wrote no phase, even with a stale phase file from before", async () => {
    const ctx = await context({ implement: [{ write: "greeting.txt", content: "hello\n" }] });
    const phaseFile = ctx.layout.phaseFile("demo", 7);
    await mkdir(dirname(phaseFile), { recursive: true });
    await writeFile(phaseFile, "PHASE:awaiting_ci\n");
    await run(ctx, { id: "job-1" });

    expect(worker.outcome("job-1")).toMatchObject({ kind: "complete", body: { phase: "dry_exit" } });
    expect(await upstream.sha("conveyor/7")).toBeUndefined();
    expect(kinds("job-1")).toEqual(["session", "activity", "usage"]);
  });

  it.each([
    [
      { phase: "escalate", reason: "Which greeting?" },
      { phase: "escalate", reason: "Which greeting?", branch: "conveyor/7" },
    ],
    [
      { phase: "failed", reason: "No idea" },
      { phase: "failed", reason: "No idea" },
    ],
  ] as const)("reports %j without pushing", async (step, expected) => {
    const ctx = await context({ implement: [step] });
    await run(ctx, { id: "job-1" });
    expect(worker.outcome("job-1")).toMatchObject({ kind: "complete", body: expected });
    expect(await upstream.sha("conveyor/7")).toBeUndefined();
  });

  it("reports an invalid phase line as failed, with the line", async () => {
    const ctx = await context({ implement: [{ run: 'echo "PHASE: done" > "$CONVEYOR_PHASE_FILE"' }] });
    await run(ctx, { id: "job-1" });
    expect(worker.outcome("job-1")).toMatchObject({
      kind: "complete",
      body: { phase: "failed", reason: 'invalid phase file: "PHASE: done"' },
    });
  });

  it("redacts secrets from what the agent reports", async () => {
    const ctx = await context({
      implement: [{ phase: "escalate", reason: "the key is sk-ant-api03-abcdef123456" }],
    });
    await run(ctx, { id: "job-1" });
    expect(worker.outcome("job-1")).toMatchObject({ body: { reason: "the key is sk-ant-***" } });
  });
});

describe("the lease", () => {
  it("heartbeats at a third of the lease for the whole job", async () => {
    worker.leaseMs = 600;
    const ctx = await context({ implement: [{ sleep: 1_500 }, { phase: "done" }] });
    await run(ctx, { id: "job-1" });

    const beats = worker.callsOf("heartbeat", "job-1").map((c) => c.at);
    const gaps = beats
      .slice(1)
      .map((at, i) => at - (beats[i] ?? 0))
      .sort((a, b) => a - b);
    // A third of 600 ms; the median, so one late timer on a busy machine does not decide.
    expect(beats.length).toBeGreaterThanOrEqual(6);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThan(170);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeLessThan(250);
    expect(worker.outcome("job-1")).toMatchObject({ kind: "complete" });
  });

  // The runner's wall clock is set wrong; its monotonic clock (and the Worker's) are not.
  it.each([
    ["5 minutes behind", -5 * 60_000],
    ["5 minutes ahead", 5 * 60_000],
  ])("keeps its lease with normal heartbeat spacing when its clock is %s", async (_, skewMs) => {
    worker.leaseMs = 600;
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + skewMs);
    try {
      const ctx = await context({ implement: [{ sleep: 1_500 }, { phase: "done" }] });
      await run(ctx, { id: "job-1" });
    } finally {
      vi.restoreAllMocks();
    }
    const beats = worker.callsOf("heartbeat", "job-1").map((c) => c.at);
    const gaps = beats
      .slice(1)
      .map((at, i) => at - (beats[i] ?? 0))
      .sort((a, b) => a - b);
    expect(beats.length).toBeGreaterThanOrEqual(6);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThan(170);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeLessThan(250);
    expect(worker.outcome("job-1")).toMatchObject({ kind: "complete" });
  });

  it("confirms its lease at once, not a third of a lease later", async () => {
    worker.leaseMs = 30_000;
    const ctx = await context({ implement: [{ phase: "done" }] });
    await run(ctx, { id: "job-1" });
    // A 30 s lease would have its first routine heartbeat at 10 s: this one is the confirmation.
    const jobCalls = worker.calls.filter((c) => c.jobId === "job-1").map((c) => c.route);
    expect(jobCalls.indexOf("heartbeat")).toBeGreaterThanOrEqual(0);
    expect(jobCalls.indexOf("heartbeat")).toBeLessThan(jobCalls.indexOf("complete"));
  });

  it("cut off from the Worker, does not push: its lease is not confirmed before the push", async () => {
    worker.leaseMs = 600;
    const ctx = await context({
      implement: [
        { sleep: 300 },
        { write: "late.txt", content: "late\n" },
        { run: 'git add late.txt && git commit -qm "Late work"' },
        { phase: "awaiting_ci" },
      ],
    });
    const claim = await claimJob(ctx, { id: "job-1" });
    const job = runJob(ctx, claim, new AbortController().signal);
    await worker.waitFor(() => worker.callsOf("heartbeat", "job-1").some((c) => c.status === 200));
    worker.unreachable = true;
    await job;

    expect(await upstream.sha("conveyor/7")).toBeUndefined();
    expect(worker.outcomes).toEqual([]);
  });

  it("a Worker that refuses the runner's token for a while still gets the session's outcome", async () => {
    const ctx = await context({ implement: [{ sleep: 300 }, { phase: "escalate", reason: "need a human" }] });
    const claim = await claimJob(ctx, { id: "job-1" });
    const job = runJob(ctx, claim, new AbortController().signal);
    await worker.waitFor(() => worker.callsOf("heartbeat", "job-1").some((c) => c.status === 200));
    worker.refusingTokens = true;
    await worker.waitFor(() => worker.calls.some((c) => c.jobId === "job-1" && c.status === 401));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    worker.refusingTokens = false;
    await job;

    expect(worker.outcome("job-1")).toMatchObject({
      kind: "complete",
      body: { phase: "escalate", reason: "need a human" },
    });
  }, 20_000);

  it("stops the session when the Worker cancels the job and reports a fail that is not retried", async () => {
    worker.leaseMs = 600;
    const ctx = await context({
      implement: [{ run: "sleep 10.25 && touch ../too-late" }, { phase: "awaiting_ci" }],
    });
    const claim = await claimJob(ctx, { id: "job-1" });
    worker.cancel("job-1");
    const started = Date.now();
    await runJob(ctx, claim, new AbortController().signal);

    expect(Date.now() - started).toBeLessThan(2_000);
    expect(worker.outcome("job-1")).toMatchObject({
      kind: "fail",
      body: { error: "cancelled", retryable: false },
    });
    expect(await upstream.sha("conveyor/7")).toBeUndefined();
    const worktree = ctx.workspace.worktreePath({ repoKey: "acme/widgets", issueNumber: 7 });
    expect(existsSync(join(worktree, "../too-late"))).toBe(false);
    // The command's whole process group went, not only its shell.
    expect(running("sleep 10.25")).toBe(false);
  });

  it("stops and reports nothing more once the lease is fenced", async () => {
    worker.leaseMs = 600;
    const ctx = await context({ implement: [{ sleep: 10_000 }, { phase: "awaiting_ci" }] });
    const claim: Claim = await claimJob(ctx, { id: "job-1" });
    const job = runJob(ctx, claim, new AbortController().signal);
    await worker.waitFor(() => worker.events.get("job-1")?.some((e) => e.kind === "session"));
    worker.revoke("job-1");
    await job;

    expect(worker.outcomes).toEqual([]);
    const calls = worker.calls.filter((c) => c.jobId === "job-1");
    // The fenced heartbeat is the last word: no complete, no fail, no events after it.
    expect(calls.at(-1)).toMatchObject({ route: "heartbeat", status: 409 });
    expect(calls.filter((c) => c.status === 409)).toHaveLength(1);
  });

  it("aborts on shutdown and reports a fail to be retried", async () => {
    const ctx = await context({ implement: [{ sleep: 10_000 }, { phase: "awaiting_ci" }] });
    const shutdown = new AbortController();
    setTimeout(() => shutdown.abort(), 300);
    await run(ctx, { id: "job-1" }, shutdown.signal);
    expect(worker.outcome("job-1")).toMatchObject({ kind: "fail", body: { retryable: true } });
  });
});

describe("reap", () => {
  it("removes the worktree and the holding, and keeps the pushed branch", async () => {
    const ctx = await context({ implement: [{ write: "a.txt", content: "a\n" }, { phase: "awaiting_ci" }] });
    await run(ctx, { id: "job-1" });
    const worktree = ctx.workspace.worktreePath({ repoKey: "acme/widgets", issueNumber: 7 });
    expect(existsSync(worktree)).toBe(true);

    await run(ctx, { id: "job-2", kind: "reap" });
    expect(worker.outcome("job-2")).toMatchObject({ kind: "complete", body: { phase: "done" } });
    expect(existsSync(worktree)).toBe(false);
    expect(ctx.holdings.list()).toEqual([]);
    expect(await upstream.sha("conveyor/7")).toBeDefined();
  });
});

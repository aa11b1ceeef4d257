import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptedDriver } from "../../../runner/drivers/scripted.ts";
import { runJob } from "../../../runner/job.ts";
import { killLeftoverSessions } from "../../../runner/leftovers.ts";
import { tempDir, Upstream } from "../git/support.ts";
import { jobContext, makeJob, type TestContext, testSandbox } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";
import { until } from "./support/observe.ts";
import { alive } from "./support/process-tree.ts";

let root = "";
let upstream: Upstream;
let worker: FakeWorker;
let ctx: TestContext;

beforeAll(async () => {
  root = await tempDir("runner-reattach");
  upstream = await Upstream.create(root);
  worker = await FakeWorker.start();
  ctx = jobContext({
    workDir: join(root, "work"),
    workerUrl: worker.url,
    token: worker.issueToken(),
    driver: () => new ScriptedDriver({ implement: [] }, testSandbox()),
  });
});

afterAll(async () => {
  expect(worker.violations).toEqual([]);
  await worker.close();
  await rm(root, { recursive: true, force: true });
});

describe("a later attempt of a job", () => {
  /** Runs `id` as claimed with `attempt`; the session it reported. */
  async function attempt(id: string, attempt: number): Promise<string | undefined> {
    worker.enqueue(makeJob({ id, attempt, cloneUrl: `file://${upstream.path}` }));
    const claim = await ctx.api.claim({ waitMs: 0, holding: [] });
    if (!claim) throw new Error("nothing to claim");
    await runJob(ctx, claim, new AbortController().signal);
    const session = worker.events.get(id)?.findLast((e) => e.kind === "session");
    return session?.kind === "session" ? session.sessionId : undefined;
  }

  it("resumes the session its earlier attempt started here; another job of the issue starts its own", async () => {
    const first = await attempt("job-1", 1);
    expect(first).toMatch(/^scripted-/);
    // The Worker re-leases the job as it was enqueued, without a session: the runner remembers it.
    expect(await attempt("job-1", 2)).toBe(first);
    const other = await attempt("job-2", 1);
    expect(other).toMatch(/^scripted-/);
    expect(other).not.toBe(first);
  });
});

describe("killLeftoverSessions", () => {
  it("kills every process carrying one of the work dir's phase files, and no other", async () => {
    const agentsDir = join(root, "work", "agents");
    const start = (env: Record<string, string>) =>
      spawn("sleep", ["30"], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: "ignore" });
    const leftover = start({ CONVEYOR_PHASE_FILE: `${agentsDir}/demo-7/phase/PHASE` });
    const otherWorkDir = start({ CONVEYOR_PHASE_FILE: `${agentsDir}-2/demo-7/phase/PHASE` });
    const unrelated = start({});
    const [pid, ...others] = [leftover, otherWorkDir, unrelated].map((child) => child.pid ?? 0);
    try {
      expect(await killLeftoverSessions(agentsDir)).toEqual([pid]);
      await until(() => !alive(pid ?? 0), 2_000);
      expect(others.map(alive)).toEqual([true, true]);
    } finally {
      for (const child of [leftover, otherWorkDir, unrelated]) child.kill("SIGKILL");
    }
  });
});

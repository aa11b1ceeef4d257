import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostSample, type PressureLimits, pressureOf } from "../../../runner/backpressure.ts";
import { ScriptedDriver } from "../../../runner/drivers/scripted.ts";
import { measureHost } from "../../../runner/host.ts";
import { Runner } from "../../../runner/runner.ts";
import { tempDir } from "../git/support.ts";
import { jobContext, makeJob, testSandbox } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";

const GIB = 1024 ** 3;
const LIMITS: PressureLimits = { minMemoryBytes: GIB, minDiskBytes: 2 * GIB, maxLoadPerCpu: 3 };
const HEALTHY: HostSample = {
  memAvailableBytes: 8 * GIB,
  memTotalBytes: 16 * GIB,
  load1: 1,
  cpus: 4,
  diskFreeBytes: 50 * GIB,
};

describe("pressureOf", () => {
  it("names each resource past its threshold, with what was measured", () => {
    expect(pressureOf(HEALTHY, LIMITS, false)).toEqual([]);
    const tight = { ...HEALTHY, memAvailableBytes: GIB / 2, diskFreeBytes: GIB, load1: 14 };
    expect(pressureOf(tight, LIMITS, false)).toEqual([
      { resource: "memory", value: GIB / 2, limit: GIB },
      { resource: "disk", value: GIB, limit: 2 * GIB },
      { resource: "load", value: 3.5, limit: 3 },
    ]);
  });

  it("holding back, resumes only past the thresholds by a margin", () => {
    const justOver = { ...HEALTHY, memAvailableBytes: 1.05 * GIB };
    expect(pressureOf(justOver, LIMITS, false)).toEqual([]);
    expect(pressureOf(justOver, LIMITS, true)).toEqual([
      { resource: "memory", value: 1.05 * GIB, limit: GIB },
    ]);
    expect(pressureOf({ ...HEALTHY, memAvailableBytes: 1.2 * GIB }, LIMITS, true)).toEqual([]);
    expect(pressureOf({ ...HEALTHY, load1: 11.2 }, LIMITS, true)).toEqual([
      { resource: "load", value: 2.8, limit: 3 },
    ]);
  });

  it("a threshold of 0 is off; a disk not measured yet is not judged", () => {
    const off = { minMemoryBytes: 0, minDiskBytes: 0, maxLoadPerCpu: 0 };
    expect(pressureOf({ ...HEALTHY, memAvailableBytes: 0, diskFreeBytes: 0, load1: 99 }, off, false)).toEqual(
      [],
    );
    const { diskFreeBytes: _, ...unmeasured } = HEALTHY;
    expect(pressureOf(unmeasured, LIMITS, false)).toEqual([]);
  });
});

describe("a runner past its memory threshold", () => {
  let root = "";
  let worker: FakeWorker;

  beforeAll(async () => {
    root = await tempDir("backpressure");
    worker = await FakeWorker.start();
  });

  afterAll(async () => {
    await worker.close();
    await rm(root, { recursive: true, force: true });
  });

  it("claims nothing, saying why, until its host recovers; then it takes the job by itself", async () => {
    // The host's /proc/meminfo as the runner reads it: the test plays the kernel.
    const meminfo = join(root, "meminfo");
    const available = (mib: number) => writeFile(meminfo, `MemAvailable:    ${mib * 1024} kB\n`);
    await available(300);
    const ctx = jobContext({
      workDir: join(root, "work"),
      workerUrl: worker.url,
      token: worker.issueToken(),
      driver: () => new ScriptedDriver({}, testSandbox()),
    });
    const runner = new Runner({
      ...ctx,
      concurrency: 2,
      claimWaitMs: 200,
      shutdownGraceMs: 1_000,
      pressureLimits: { minMemoryBytes: GIB, minDiskBytes: 0, maxLoadPerCpu: 0 },
      measureHost: () => measureHost(meminfo),
      pressureCheckMs: 50,
    });
    const job = makeJob({ id: "job-held", cloneUrl: "http://127.0.0.1:9/none.git", kind: "reap" });
    worker.enqueue(job);
    const running = runner.run();
    const held = () => worker.callsOf("claim").filter((call) => call.body.pressure !== undefined);
    await worker.waitFor(() => held().length >= 3);
    expect(worker.leaseToken(job.id)).toBeUndefined();
    // Only one slot says so, asking nothing of the queue.
    expect(worker.callsOf("claim").length).toBe(held().length);
    expect(held()[0]?.body).toMatchObject({
      waitMs: 0,
      pressure: [{ resource: "memory", value: 300 * 1024 ** 2, limit: GIB }],
    });
    expect(
      ctx.lines.filter((line) => line.msg === "holding back: no new jobs until the host recovers"),
    ).toHaveLength(1);

    // Just over the threshold is not yet recovered: it does not flap.
    await available(1_075);
    const before = held().length;
    await worker.waitFor(() => held().length >= before + 3 && held().at(-1)?.body.pressure !== undefined);
    expect(worker.leaseToken(job.id)).toBeUndefined();

    await available(4_096);
    const outcome = await worker.waitFor(() => worker.outcome(job.id));
    expect(outcome.kind).toBe("complete");
    expect(ctx.lines.some((line) => line.msg === "the host recovered: claiming again")).toBe(true);
    runner.stop();
    await running;
    expect(worker.violations).toEqual([]);
  });
});

import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DiskMeter, measureWorkDir } from "../../../runner/disk.ts";
import { Workspace } from "../../../runner/git/workspace.ts";
import { tempDir, Upstream } from "../git/support.ts";

const REPO = "acme/widgets";
let root = "";
let upstream: Upstream;

beforeEach(async () => {
  root = await tempDir("disk");
  upstream = await Upstream.create(root);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("the work dir's disk report", () => {
  it("counts the issues' worktrees and their bytes, and goes back to zero worktrees once they are reaped", async () => {
    const ws = new Workspace({ workDir: join(root, "work") });
    expect(await measureWorkDir(ws.workDir)).toEqual({
      bytes: expect.any(Number),
      worktrees: 0,
      freeBytes: expect.any(Number),
      totalBytes: expect.any(Number),
    });
    await ws.ensureMirror({ repoKey: REPO, remoteUrl: upstream.path });
    const mirrorOnly = await measureWorkDir(ws.workDir);
    for (const issueNumber of [7, 8]) {
      await ws.ensureWorktree({ repoKey: REPO, issueNumber, baseBranch: "main" });
    }
    const big = join(ws.worktreePath({ repoKey: REPO, issueNumber: 7 }), "big.bin");
    await writeFile(big, Buffer.alloc(256 * 1024, 1));
    const two = await measureWorkDir(ws.workDir);
    expect(two.worktrees).toBe(2);
    expect(two.freeBytes).toBeGreaterThan(0);
    expect(two.freeBytes).toBeLessThanOrEqual(two.totalBytes ?? 0);
    expect(two.bytes).toBeGreaterThanOrEqual(mirrorOnly.bytes + 256 * 1024);

    await ws.reap({ repoKey: REPO, issueNumber: 7 });
    expect((await measureWorkDir(ws.workDir)).worktrees).toBe(1);
    await ws.reap({ repoKey: REPO, issueNumber: 8 });
    const none = await measureWorkDir(ws.workDir);
    expect(none.worktrees).toBe(0);
    expect(none.bytes).toBeLessThan(two.bytes);
  });

  it("measures in the background, at most once per interval, and hands out the last measurement", async () => {
    const workDir = join(root, "meter");
    let now = 0;
    const meter = new DiskMeter(workDir, 60_000, () => now);
    // Nothing measured yet: the first call starts a measurement and reports nothing.
    expect(meter.latest()).toBeUndefined();
    await meter.refresh();
    const first = meter.latest();
    expect(first).toEqual({ bytes: 0, worktrees: 0 });

    await new Workspace({ workDir }).ensureMirror({ repoKey: REPO, remoteUrl: upstream.path });
    now = 59_999;
    // Not due: the same report, and no new measurement starts.
    expect(meter.latest()).toBe(first);
    now = 60_000;
    expect(meter.latest()).toBe(first);
    await meter.refresh();
    expect(meter.latest()?.bytes).toBeGreaterThan(0);
  });

  it("counts worktrees at every report, not once the next measurement is due", async () => {
    const ws = new Workspace({ workDir: join(root, "counted") });
    let now = 0;
    const meter = new DiskMeter(ws.workDir, 60_000, () => now);
    expect(await meter.current()).toBeUndefined();
    await meter.refresh();
    expect(await meter.current()).toMatchObject({ worktrees: 0 });
    await ws.ensureMirror({ repoKey: REPO, remoteUrl: upstream.path });
    await ws.ensureWorktree({ repoKey: REPO, issueNumber: 7, baseBranch: "main" });
    now = 1_000;
    expect(await meter.current()).toMatchObject({ worktrees: 1 });
    await ws.reap({ repoKey: REPO, issueNumber: 7 });
    expect(await meter.current()).toMatchObject({ worktrees: 0 });
  });
});

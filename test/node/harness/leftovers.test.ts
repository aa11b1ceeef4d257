/**
 * Nothing a harness starts outlives its file or its process (test/support/children.ts): a Worker's start
 * given up on midway, wrangler dev (or the benches' Miniflare) and its workerd running, leaves no process of
 * their group, whether the file's `beforeAll` failed with the start going on, the process exited, or a bench's
 * teardown ran with its process going on.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { leftIn } from "./support/group.ts";

const ROOT = join(import.meta.dirname, "../../..");
const run = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  promisify(execFile)(process.execPath, args, { cwd: ROOT, env }).then(
    (done) => ({ code: 0, stdout: done.stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );

/** What is left of group `pgid`, killed so that a failing test leaves nothing running either. */
async function leftGroup(pgid: number) {
  const left = await leftIn(pgid);
  if (left.length > 0) process.kill(-pgid, "SIGKILL");
  return left.map((p) => p.command);
}

const dir = await mkdtemp(join(tmpdir(), "conveyor-leftovers-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a Worker's start given up on midway", () => {
  it("by a beforeAll that failed: the file's teardown kills its group", async () => {
    const pidFile = join(dir, "pgid");
    const vitest = join(ROOT, "node_modules/vitest/vitest.mjs");
    const config = "test/node/harness/fixtures/vitest.config.ts";
    const { code } = await run([vitest, "run", "--config", config], {
      ...process.env,
      LEFTOVER_PID_FILE: pidFile,
    });
    expect(code).not.toBe(0);
    const pgid = Number(await readFile(pidFile, "utf8"));
    expect(pgid).toBeGreaterThan(0);
    expect(await leftGroup(pgid)).toEqual([]);
  });

  it("by its process exiting: the exit kills its group", async () => {
    const { code, stdout } = await run(["test/node/harness/fixtures/exit-midway.ts"]);
    expect(code).toBe(3);
    const pgid = Number(stdout.trim());
    expect(pgid).toBeGreaterThan(0);
    expect(await leftGroup(pgid)).toEqual([]);
  });

  it("by a bench's teardown, its process going on: the benches' Miniflare goes with it", async () => {
    const { code, stdout } = await run([
      "test/node/harness/fixtures/exit-midway.ts",
      "miniflare",
      "teardown",
    ]);
    expect(code).toBe(0);
    const { pgid, left } = JSON.parse(stdout.trim()) as { pgid: number; left: string[] };
    expect(pgid).toBeGreaterThan(0);
    expect(left).toEqual([]);
    expect(await leftGroup(pgid)).toEqual([]);
  });
});

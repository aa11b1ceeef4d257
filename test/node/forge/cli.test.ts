import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { track } from "../../support/children.ts";
import { tempDir } from "./harness.ts";

const CLI = new URL("../../support/forge/cli.ts", import.meta.url).pathname;

describe("the CLI", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("runs on plain Node (type stripping), prints its URL first and stops on SIGTERM", async () => {
    const dataDir = await tempDir("cli");
    dirs.push(dataDir);
    const child = spawn(
      process.execPath,
      [CLI, "--data", dataDir, "--repo", "demo/app", "--admin-token", "a".repeat(40)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    // Killed by the file's teardown should the test end before its SIGTERM.
    track(child);
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => String((await lines.next()).value);

    const url = await next();
    const rest = [await next(), await next(), await next()];
    const repo = await fetch(`${url}/api/v1/repos/demo/app`, {
      headers: { Authorization: `token ${"a".repeat(40)}` },
    });
    child.kill("SIGTERM");
    const code = await new Promise((exited) => child.on("exit", exited));

    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(rest).toEqual([
      `api: ${url}/api/v1`,
      `admin: forge-admin ${"a".repeat(40)}`,
      `repo: demo/app ${url.replace("http://", `http://token:${"a".repeat(40)}@`)}/demo/app.git`,
    ]);
    expect(repo.status).toBe(200);
    expect(code).toBe(0);
  });
});

/**
 * The bins as a clone of the repository has them: `npx conveyor` and `npx conveyor-runner` run the
 * TypeScript sources with no build step (no dist/), on the Node that `npm ci` brings (the workspace
 * tools/node-runtime: first on npx's PATH) even where the system's `node` is older, as on this Node-20
 * machine. The copy holds what git tracks (and new files it does not ignore); its node_modules is the
 * repository's, as `npm ci` made it.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const REPO = new URL("../../../", import.meta.url).pathname;
const { version } = JSON.parse(await readFile(join(REPO, "package.json"), "utf8"));

let copy = "";

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), "conveyor-clone-"));
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const file of stdout.split("\0").filter((f) => f && existsSync(join(REPO, f)))) {
    await mkdir(dirname(join(copy, file)), { recursive: true });
    await cp(join(REPO, file), join(copy, file));
  }
  await symlink(join(REPO, "node_modules"), join(copy, "node_modules"));
});

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

/** npx in the copy with only the system on PATH, and an npm cache of its own (npx installs the bins there). */
const npx = (args: string[]) =>
  run("npx", ["--offline", ...args], {
    cwd: copy,
    env: {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      HOME: process.env.HOME ?? "/",
      npm_config_cache: join(copy, ".npm"),
    },
  });

describe("the bins in a clone, with no build step", () => {
  it("npx conveyor --help and --version", async () => {
    expect(existsSync(join(copy, "dist"))).toBe(false);
    expect((await npx(["conveyor", "--help"])).stdout).toMatch(/^usage: conveyor <command>/);
    expect((await npx(["conveyor", "--version"])).stdout).toBe(`conveyor ${version}\n`);
  });

  it("npx conveyor-runner --version", async () => {
    expect((await npx(["conveyor-runner", "--version"])).stdout).toBe(`conveyor-runner ${version}\n`);
  });
});

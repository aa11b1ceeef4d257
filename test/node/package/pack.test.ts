/**
 * The npm package as a build host gets it: `npm pack`, installed into an empty directory without the
 * repository, and its bins run on the Node the install brings (≥ 22), which strips no types under
 * node_modules: only compiled JavaScript can work.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const REPO = new URL("../../../", import.meta.url).pathname;
const pkg = JSON.parse(await readFile(join(REPO, "package.json"), "utf8"));

type LockEntry = { dev?: boolean; devOptional?: boolean; link?: boolean } & Record<string, unknown>;

/**
 * A lockfile for an app that depends on the tarball alone, with the repository's own pins for everything
 * else. `npm install <tarball> --offline` cannot work here: the npm cache holds the packages' tarballs (from
 * `npm ci`) but not the registry's version lists that resolving a range needs. `npm ci --offline` from this
 * lockfile installs the same dependencies from that cache by their integrity, with no registry at all.
 */
async function appLock(tarball: string) {
  const lock = JSON.parse(await readFile(join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const resolved = `file:${tarball}`;
  const integrity = `sha512-${createHash("sha512")
    .update(await readFile(tarball))
    .digest("base64")}`;
  const packages: Record<string, unknown> = {
    "": { name: "app", dependencies: { conveyor: resolved } },
    "node_modules/conveyor": {
      version: pkg.version,
      resolved,
      integrity,
      dependencies: pkg.dependencies,
      optionalDependencies: pkg.optionalDependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path !== "" && !entry.dev && !entry.devOptional && !entry.link) packages[path] = entry;
  }
  return { name: "app", lockfileVersion: 3, requires: true, packages };
}

let dir = "";
let app = "";
let files: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "conveyor-pack-"));
  // --dry-run runs prepack (the build) too, and lists what the tarball holds.
  const { stdout: listing } = await run("npm", ["pack", "--dry-run", "--json"], { cwd: REPO });
  files = (JSON.parse(listing) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
  await run("npm", ["pack", "--pack-destination", dir], { cwd: REPO });
  const tarball = join(dir, `conveyor-${pkg.version}.tgz`);
  app = join(dir, "app");
  await mkdir(app);
  await writeFile(
    join(app, "package.json"),
    JSON.stringify({ name: "app", private: true, dependencies: { conveyor: `file:${tarball}` } }),
  );
  await writeFile(join(app, "package-lock.json"), JSON.stringify(await appLock(tarball)));
  await run("npm", ["ci", "--offline", "--no-audit", "--no-fund"], { cwd: app });
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the packed package", () => {
  it("holds the compiled bins and what they need, and no tests, fixtures or TypeScript", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "dist/cli/conveyor.js",
        "dist/runner/cli.js",
        "dist/runner/sandbox/init.js",
        "dist/package.json",
        "runner/conveyor-runner.service",
      ]),
    );
    expect(files.filter((f) => /(^|\/)test\/|fixtures|\.test\.|\.ts$|^src\/|^docs\//.test(f))).toEqual([]);
  });

  // Only the app's node_modules/.bin (npx adds it: the bins and the Node the package brings) and the system.
  const bare = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: process.env.HOME ?? "/root" };

  it.each([
    ["conveyor", `conveyor ${pkg.version}\n`],
    ["conveyor-runner", `conveyor-runner ${pkg.version}\n`],
  ])("npx %s --version runs without the repository", async (bin, version) => {
    const { stdout } = await run("npx", ["--offline", bin, "--version"], { cwd: app, env: bare });
    expect(stdout).toBe(version);
  });

  it("the runner's --help runs from the package", async () => {
    const { stdout } = await run("npx", ["--offline", "conveyor-runner", "--help"], { cwd: app, env: bare });
    expect(stdout).toMatch(/^usage: conveyor-runner /);
  });

  // The compiled sandbox starts its init (init.js beside it, with dist/package.json saying it is a module)
  // inside bubblewrap, where only those files of the package are visible.
  it.skipIf(!existsSync("/usr/bin/bwrap"))("the packaged sandbox runs a command in bubblewrap", async () => {
    const script = join(app, "sandbox-check.mjs");
    await writeFile(
      script,
      `import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "conveyor/dist/runner/sandbox/session-sandbox.js";
const worktree = mkdtempSync(join(tmpdir(), "conveyor-pack-sandbox-"));
const sandbox = new Sandbox({ mode: "bubblewrap", model: {}, secretFiles: [] });
const session = await sandbox.open({ worktree, writable: [], readOnly: [] }, { budgetUsd: 1, allowedDomains: [] });
const child = session.spawn("/bin/sh", ["-c", "echo inside as pid $$"], { env: { PATH: "/usr/bin:/bin" } });
let out = "";
child.stdout.on("data", (chunk) => { out += chunk; });
child.stderr.on("data", (chunk) => process.stderr.write(chunk));
const code = await new Promise((resolve) => child.on("close", resolve));
await session.close();
process.stdout.write(code + " " + out);
`,
    );
    const { stdout } = await run(join(app, "node_modules/.bin/node"), [script], { cwd: app, env: bare });
    // Its own PID namespace: the shell is one of the first few processes there.
    expect(stdout).toMatch(/^0 inside as pid \d\n$/);
  });
});

/**
 * The npm package as a build host gets it: `npm pack`, installed into an empty directory without the
 * repository, and its bins run on the host's own Node (≥ 22.12), which strips no types under node_modules:
 * only compiled JavaScript can work. The package brings no Node: the repository's (its workspace
 * tools/node-runtime) stays out of it.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const REPO = new URL("../../../", import.meta.url).pathname;
const pkg = JSON.parse(await readFile(join(REPO, "package.json"), "utf8"));

type LockEntry = {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
} & Record<string, unknown>;

/**
 * A lockfile for an app that depends on the tarball alone, with the repository's own pins for what the
 * package's dependencies need (nothing of the repository's own tooling: the Node 22 its workspace brings
 * among it). `npm install <tarball> --offline` cannot work here: the npm cache holds the packages' tarballs
 * (from `npm ci`) but not the registry's version lists that resolving a range needs. `npm ci --offline` from
 * this lockfile installs the same dependencies from that cache by their integrity, with no registry at all.
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
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  // As npm resolves a dependency: the nearest node_modules above the package that needs it.
  const resolve = (parent: string, name: string): string | undefined => {
    for (let at = parent; ; at = at.slice(0, Math.max(0, at.lastIndexOf("/node_modules/")))) {
      const path = `${at ? `${at}/` : ""}node_modules/${name}`;
      if (lock.packages[path]) return path;
      if (!at) return undefined;
    }
  };
  const wanted: [string, string][] = Object.keys(pkg.dependencies).map((name) => ["", name]);
  for (const [parent, name] of wanted) {
    const path = resolve(parent, name);
    const entry = path && lock.packages[path];
    if (!path || !entry || packages[path]) continue;
    packages[path] = entry;
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    for (const deps of [entry.dependencies, entry.optionalDependencies, entry.peerDependencies]) {
      for (const dep of Object.keys(deps ?? {}))
        if (deps !== entry.peerDependencies || !optionalPeers[dep]?.optional) wanted.push([path, dep]);
    }
  }
  return { name: "app", lockfileVersion: 3, requires: true, packages };
}

let dir = "";
let app = "";
let files: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "conveyor-pack-"));
  // Runs prepack (the build), packs, and lists what the tarball holds.
  const { stdout: listing } = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: REPO });
  files = (JSON.parse(listing) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
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

/**
 * Every file and directory below `root`: what each takes on disk (blocks, as `du` counts them) and whether it is
 * an ELF binary.
 */
async function walk(root: string): Promise<{ path: string; bytes: number; elf: boolean }[]> {
  const found = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const { blocks } = await stat(path);
    let elf = false;
    if (entry.isFile()) {
      const file = await open(path);
      const { buffer, bytesRead } = await file.read(Buffer.alloc(4), 0, 4, 0);
      await file.close();
      elf = bytesRead === 4 && buffer.toString("latin1") === "\x7fELF";
    }
    found.push({ path, bytes: blocks * 512, elf });
  }
  return found;
}

// The build host's own Node (the one running this test: ≥ 22.12) and the system; npx adds the app's bins.
const host = {
  PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
  HOME: process.env.HOME ?? "/root",
};

describe("the packed package", () => {
  it("holds the bins, the compiled code they run and no tests, fixtures or TypeScript", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "bin/conveyor.js",
        "bin/conveyor-runner.js",
        "bin/start.js",
        "dist/cli/conveyor.js",
        "dist/runner/cli.js",
        "dist/runner/sandbox/init.js",
        "dist/package.json",
        "runner/conveyor-runner.service",
      ]),
    );
    expect(files.filter((f) => /(^|\/)test\/|fixtures|\.test\.|\.ts$|^src\/|^docs\//.test(f))).toEqual([]);
  });

  // Megabytes as `du -sh` gives them (MiB): the unit the 634 MB of a package with its own Node were measured in.
  it("installs in under 450 MB, with Claude Code as its only binary (no Node of its own)", async () => {
    const installed = await walk(join(app, "node_modules"));
    const megabytes = installed.reduce((sum, f) => sum + f.bytes, 0) / 1024 ** 2;
    expect(megabytes).toBeLessThan(450);
    const binaries = installed.filter((f) => f.elf).map((f) => relative(app, f.path));
    expect(binaries).toEqual([
      expect.stringMatching(/^node_modules\/@anthropic-ai\/claude-agent-sdk-linux-\w+\/claude$/),
    ]);
  });

  it.each([
    ["conveyor", `conveyor ${pkg.version}\n`],
    ["conveyor-runner", `conveyor-runner ${pkg.version}\n`],
  ])("npx %s --version runs without the repository, on the host's Node", async (bin, version) => {
    const { stdout } = await run("npx", ["--offline", bin, "--version"], { cwd: app, env: host });
    expect(stdout).toBe(version);
  });

  it("the runner's --help runs from the package", async () => {
    const { stdout } = await run("npx", ["--offline", "conveyor-runner", "--help"], { cwd: app, env: host });
    expect(stdout).toMatch(/^usage: conveyor-runner /);
  });

  // Whatever this machine's Node, one the package's engines do not admit: the same bins under a package.json
  // that asks for Node 99.
  it("on a Node older than its engines, each bin refuses in one line (exit 2) and runs nothing", async () => {
    const copy = join(dir, "future");
    await cp(join(app, "node_modules/conveyor"), copy, { recursive: true });
    const manifest = JSON.parse(await readFile(join(copy, "package.json"), "utf8"));
    await writeFile(join(copy, "package.json"), JSON.stringify({ ...manifest, engines: { node: ">=99.0" } }));
    for (const bin of ["conveyor", "conveyor-runner"]) {
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
        execFile(
          process.execPath,
          [join(copy, `bin/${bin}.js`), "--version"],
          { env: host },
          (error, stdout, stderr) => done({ code: error ? Number(error.code) : 0, stdout, stderr }),
        ),
      );
      expect(result).toEqual({
        code: 2,
        stdout: "",
        stderr: `${bin}: needs Node >= 99.0, but ${process.execPath} is Node ${process.versions.node}\n`,
      });
    }
  });

  // The compiled sandbox starts its init (init.js beside it, with dist/package.json saying it is a module)
  // inside bubblewrap, where only those files of the package are visible.
  it.skipIf(!existsSync("/usr/bin/bwrap"))("the packaged sandbox runs a command in bubblewrap", async () => {
    const script = join(app, "sandbox-check.mjs");
    await writeFile(
      script,
      `import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
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
    const { stdout } = await run(process.execPath, [script], { cwd: app, env: host });
    // Its own PID namespace: the shell is one of the first few processes there.
    expect(stdout).toMatch(/^0 inside as pid \d\n$/);
  });
});

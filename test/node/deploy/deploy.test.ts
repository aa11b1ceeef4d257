/** npm run deploy: its plan, the config it generates, and that config's steps in wrangler's local mode. */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployConfig, findDatabase, names, secretNames, workerUrl } from "../../../scripts/deploy/plan.ts";

const run = promisify(execFile);
const ROOT = new URL("../../../", import.meta.url).pathname;
const ID = "7b1f3c2e-9a4d-4e8b-b1c2-3d4e5f6a7b8c";
const OFFLINE = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

let toml = "";
let dir = "";

beforeAll(async () => {
  toml = await readFile(join(ROOT, "wrangler.toml"), "utf8");
  dir = await mkdtemp(join(tmpdir(), "conveyor-deploy-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("npm run deploy -- --dry-run", () => {
  it("prints the steps in order and changes nothing", async () => {
    const before = await readFile(join(ROOT, "wrangler.toml"), "utf8");
    const { stdout } = await run(
      process.execPath,
      [
        "--experimental-strip-types",
        "--disable-warning=ExperimentalWarning",
        "scripts/deploy.ts",
        "--dry-run",
      ],
      { cwd: ROOT, env: { ...OFFLINE, PATH: "/nonexistent" } },
    );
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("deploy: plan for the Worker conveyor (nothing is changed):");
    const order = [
      /^ {2}1\. wrangler whoami/,
      /^ {2}2\. wrangler d1 list --json: find the D1 database conveyor; wrangler d1 create conveyor/,
      /^ {2}3\. write \.wrangler\/deploy\/wrangler\.toml: .*observability on/,
      /^ {2}4\. wrangler d1 migrations apply conveyor --remote -c \.wrangler\/deploy\/wrangler\.toml/,
      /^ {2}5\. wrangler deploy -c \.wrangler\/deploy\/wrangler\.toml: .*print its URL/,
      /^ {2}6\. wrangler secret list: .*CONVEYOR_ADMIN_TOKEN, CONVEYOR_SECRETS_KEY, ANTHROPIC_API_KEY .*on stdin/,
    ];
    expect(lines.slice(1)).toHaveLength(order.length);
    for (const [i, pattern] of order.entries()) expect(lines[i + 1]).toMatch(pattern);
    expect(await readFile(join(ROOT, "wrangler.toml"), "utf8")).toBe(before);
  });
});

describe("npm run deploy against a stand-in for wrangler's remote commands", () => {
  const STAND_IN = new URL("../../support/wrangler/", import.meta.url).pathname;
  let account = "";
  let out = "";

  type Call = { command: string; args: string[]; stdin: string };
  const calls = async (): Promise<Call[]> =>
    (await readFile(join(account, "calls.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
  const commands = async () => (await calls()).map((c) => c.command);

  function deploy(): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/deploy.ts"],
        {
          cwd: ROOT,
          env: {
            ...OFFLINE,
            PATH: `${STAND_IN}:${process.env.PATH}`,
            WRANGLER_STAND_IN: account,
            CONVEYOR_DEPLOY_DIR: out,
            ANTHROPIC_API_KEY: "sk-ant-test-key",
          },
        },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
  }

  beforeAll(async () => {
    account = join(dir, "account");
    out = join(dir, "generated");
    await mkdir(account);
  });

  it("takes a fresh account to a running Worker: database, config, migrations, deploy, secrets on stdin, URL", async () => {
    const run1 = await deploy();
    expect(run1, run1.stderr).toMatchObject({ code: 0 });
    expect(await commands()).toEqual([
      "whoami",
      "d1 list",
      "d1 create conveyor",
      "d1 list",
      "d1 migrations apply",
      "deploy",
      "secret list",
      "secret put CONVEYOR_ADMIN_TOKEN",
      "secret put CONVEYOR_SECRETS_KEY",
      "secret put ANTHROPIC_API_KEY",
    ]);
    const all = await calls();
    expect(all.find((c) => c.args.includes("migrations"))?.args).toEqual(
      expect.arrayContaining(["--remote", "-c", join(out, "wrangler.toml")]),
    );
    const config = await readFile(join(out, "wrangler.toml"), "utf8");
    expect(config).toContain(`database_id = "${ID}"`);
    // The secrets went in on stdin; none is on any command line.
    const state = JSON.parse(await readFile(join(account, "state.json"), "utf8"));
    const admin = (await readFile(join(out, "admin-token"), "utf8")).trim();
    const key = (await readFile(join(out, "secrets-key"), "utf8")).trim();
    expect(state.secrets).toEqual({
      CONVEYOR_ADMIN_TOKEN: admin,
      CONVEYOR_SECRETS_KEY: key,
      ANTHROPIC_API_KEY: "sk-ant-test-key",
    });
    expect(admin).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(key, "base64")).toHaveLength(32);
    for (const secret of Object.values(state.secrets) as string[]) {
      for (const call of all) expect(call.args.join(" ")).not.toContain(secret);
      expect(run1.stdout + run1.stderr).not.toContain(secret);
    }
    expect((await stat(join(out, "admin-token"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(out, "secrets-key"))).mode & 0o777).toBe(0o600);
    expect(run1.stdout.trimEnd().split("\n").at(-1)).toBe(
      "deploy: the Worker runs at https://conveyor.ada.workers.dev (dashboard: https://conveyor.ada.workers.dev/dashboard)",
    );
  });

  it("upgrades in place: the same database, migrations before the deploy, the secrets kept", async () => {
    const before = JSON.parse(await readFile(join(account, "state.json"), "utf8")).secrets;
    const seen = (await calls()).length;
    const run2 = await deploy();
    expect(run2, run2.stderr).toMatchObject({ code: 0 });
    expect((await commands()).slice(seen)).toEqual([
      "whoami",
      "d1 list",
      "d1 migrations apply",
      "deploy",
      "secret list",
    ]);
    expect(run2.stdout).toContain("CONVEYOR_SECRETS_KEY: already set, kept");
    expect(JSON.parse(await readFile(join(account, "state.json"), "utf8")).secrets).toEqual(before);
  });

  it("passes wrangler's own error through when whoami fails otherwise (an expired token), and stops", async () => {
    const state = JSON.parse(await readFile(join(account, "state.json"), "utf8"));
    const error = [
      "✘ [ERROR] A request to the Cloudflare API (/accounts) failed.",
      "",
      "  Authentication error [code: 10000]",
    ].join("\n");
    await writeFile(join(account, "state.json"), JSON.stringify({ ...state, whoamiError: error }));
    const seen = (await calls()).length;
    const failed = await deploy();
    await writeFile(join(account, "state.json"), JSON.stringify(state));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(`${error}\ndeploy: wrangler whoami failed (exit 1): its error is above\n`);
    expect(failed.stdout).not.toContain("not logged in");
    expect((await commands()).slice(seen)).toEqual(["whoami"]);
  });

  it("stops at once when wrangler is not logged in", async () => {
    const state = JSON.parse(await readFile(join(account, "state.json"), "utf8"));
    await writeFile(join(account, "state.json"), JSON.stringify({ ...state, loggedIn: false }));
    const seen = (await calls()).length;
    const run3 = await deploy();
    expect(run3.code).toBe(1);
    expect(run3.stdout).toContain("not logged in to Cloudflare: run npx wrangler login");
    expect((await commands()).slice(seen)).toEqual(["whoami"]);
  });
});

describe("the generated deploy config", () => {
  it("carries the database id, paths from its own directory and observability; the tracked file keeps its placeholder", () => {
    const config = deployConfig(toml, ID, ROOT, join(ROOT, ".wrangler/deploy"));
    expect(config).toMatch(/^# Generated by npm run deploy/);
    expect(config).toContain(`database_id = "${ID}"`);
    expect(config).toContain('main = "../../src/index.ts"');
    expect(config).toContain('migrations_dir = "../../migrations"');
    expect(config).toMatch(/\n\[observability\]\nenabled = true\n$/);
    expect(config).not.toContain("00000000-0000-0000-0000-000000000000");
    expect(toml).toContain('database_id = "00000000-0000-0000-0000-000000000000"');
    expect(names(toml)).toEqual({ worker: "conveyor", database: "conveyor" });
  });

  it("keeps an [observability] section the tracked file has, and refuses a malformed id", () => {
    const own = `${toml}\n[observability]\nenabled = false\n`;
    expect(
      deployConfig(own, ID, ROOT, join(ROOT, ".wrangler/deploy")).match(/\[observability\]/g),
    ).toHaveLength(1);
    expect(() => deployConfig(toml, "conveyor", ROOT, ROOT)).toThrow(/not a D1 database id/);
  });

  it("reads wrangler's answers", () => {
    const list = JSON.stringify([
      { uuid: "11111111-2222-3333-4444-555555555555", name: "other", version: "production" },
      { uuid: ID, name: "conveyor", version: "production", num_tables: 12 },
    ]);
    expect(findDatabase(list, "conveyor")).toBe(ID);
    expect(findDatabase("[]", "conveyor")).toBeUndefined();
    const deployed = [
      "Uploaded conveyor (4.20 sec)",
      "Deployed conveyor triggers (0.35 sec)",
      "  https://conveyor.acme.workers.dev",
      "  schedule: * * * * *",
      "Current Version ID: 0b1c2d3e",
    ].join("\n");
    expect(workerUrl(deployed)).toBe("https://conveyor.acme.workers.dev");
    expect(workerUrl("Uploaded conveyor")).toBeUndefined();
    expect(secretNames('[{"name":"CONVEYOR_ADMIN_TOKEN","type":"secret_text"}]')).toEqual([
      "CONVEYOR_ADMIN_TOKEN",
    ]);
  });

  describe("its steps in wrangler's local mode", () => {
    let config = "";
    const wrangler = (args: string[]) =>
      run(join(ROOT, "node_modules/.bin/wrangler"), args, { cwd: dir, env: OFFLINE, timeout: 120_000 });

    beforeAll(async () => {
      config = join(dir, "wrangler.toml");
      await writeFile(config, deployConfig(toml, ID, ROOT, dir));
    });

    it("applies the migrations to the database it names", async () => {
      const { stdout } = await wrangler([
        "d1",
        "migrations",
        "apply",
        "conveyor",
        "--local",
        "-c",
        config,
        "--persist-to",
        join(dir, "state"),
      ]);
      expect(stdout).toMatch(/0001_\w+\.sql/);
      const again = await wrangler([
        "d1",
        "migrations",
        "list",
        "conveyor",
        "--local",
        "-c",
        config,
        "--persist-to",
        join(dir, "state"),
      ]);
      expect(again.stdout).toMatch(/No migrations to apply/);
    }, 120_000);

    it("bundles the Worker it points at (wrangler deploy --dry-run)", async () => {
      const out = join(dir, "out");
      const { stdout } = await wrangler(["deploy", "--dry-run", "-c", config, "--outdir", out]);
      expect(stdout).toMatch(/--dry-run: exiting now/);
      expect(existsSync(join(out, "index.js"))).toBe(true);
    }, 120_000);
  });
});

/** The `conveyor` CLI as an operator runs it, against the real Worker (wrangler dev) and a local forge. */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createForgeClient } from "../../../src/forge/client/index.ts";
import { type LocalForge, startLocalForge } from "../../support/forge/index.ts";
import { PATHS } from "../../support/lifecycle-samples.ts";
import {
  ESCALATED_THEN_ABANDONED,
  historyInserts,
  issueHistory,
  MERGED_AFTER_RED_CI,
  MERGED_FIRST_PASS,
  usageRow,
} from "../../support/outcome-history.ts";
import { ROTATE_TOKEN_MD } from "../../support/rotate-token.ts";
import { insertRows, writeSeed } from "../../support/seed-sql.ts";
import { pushFiles } from "../../support/services/git-push.ts";
import { type LocalWorker, startLocalWorker, TEST_ADMIN_TOKEN } from "../../support/worker.ts";
import { bin, inProcess, type Run } from "./support.ts";

const REPO_DIR = new URL("../../../", import.meta.url).pathname;
const REPO = "acme/widgets";
const DAY = 86_400_000;
const HISTORY_DAY = Date.parse("2026-11-01T00:00:00Z");

let worker: LocalWorker;
let forge: LocalForge;
let forgeData = "";
let forgeToken = "";

beforeAll(async () => {
  forgeData = await mkdtemp(join(tmpdir(), "conveyor-cli-forge-"));
  // What ops#40's sessions cost: $1.25 today (UTC) and $0.50 the day before, as runners report usage.
  const now = Date.now();
  const usage = (id: string, usd: number, at: number) => ({
    id,
    project_id: "ops",
    number: 40,
    iteration: 1,
    session_id: "sess-1",
    input_tokens: 1000,
    output_tokens: 100,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    usd,
    turns: 3,
    at,
  });
  const today = Math.floor(now / DAY) * DAY;
  // A history for `outcomes`: two merges on November 1st, an escalation abandoned on the 2nd.
  const history = [
    issueHistory("hist", 1, HISTORY_DAY, MERGED_FIRST_PASS),
    issueHistory("hist", 2, HISTORY_DAY, MERGED_AFTER_RED_CI),
    issueHistory("hist", 3, HISTORY_DAY + DAY, ESCALATED_THEN_ABANDONED),
  ];
  const seedSql = await writeSeed("cli", [
    ...insertRows("usage", [
      usage("u-1", 1.25, today),
      usage("u-2", 0.5, today - DAY / 2),
      usageRow("hist", 1, 2, HISTORY_DAY + 3_600_000),
    ]),
    ...historyInserts(history),
  ]);
  [worker, forge] = await Promise.all([
    startLocalWorker({ seedSql }),
    startLocalForge({ dataDir: forgeData }),
  ]);
  await rm(seedSql);
  await forge.createRepo({ owner: "acme", name: "widgets" });
  forgeToken = forge.createUser("conveyor-bot").token;
  forge.addCollaborator(REPO, "conveyor-bot", "admin");
}, 120_000);

afterAll(async () => {
  await Promise.all([worker?.stop(), forge?.close()]);
  await rm(forgeData, { recursive: true, force: true });
});

async function until(check: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const { ok, json, fails } = inProcess(() => ({
  CONVEYOR_URL: worker.url,
  CONVEYOR_TOKEN: TEST_ADMIN_TOKEN,
}));

const forgeGet = async (path: string) =>
  (
    await fetch(`${forge.apiUrl}/repos/${REPO}${path}`, { headers: { authorization: `token ${forgeToken}` } })
  ).json();

/** The forge token in a file: a secret is never a flag. */
const tokenFile = async (token: string) => {
  const file = join(forgeData, `token-${token}`);
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return file;
};

const addArgs = async (id: string, token = forgeToken) => [
  "project",
  "add",
  id,
  "--forge",
  "forgejo",
  "--api-url",
  forge.apiUrl,
  "--repo",
  REPO,
  "--forge-token-file",
  await tokenFile(token),
];

describe("the README's examples against npm run dev", () => {
  it("run as written (this Worker's URL and token for the dev ones) and start no work", async () => {
    const readme = await readFile(new URL("../../../README.md", import.meta.url), "utf8");
    const block = readme.match(/```sh\n(export CONVEYOR_URL=http:\/\/127\.0\.0\.1:8787[^`]*)```/)?.[1];
    expect(block).toBeDefined();
    const script = (block ?? "")
      .replaceAll("http://127.0.0.1:8787", worker.url)
      .replaceAll("dev-admin-token", TEST_ADMIN_TOKEN);
    const before = await json(["status"]);
    const out = await new Promise<Run>((resolve) =>
      execFile("bash", ["-euo", "pipefail", "-c", script], { cwd: REPO_DIR }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      ),
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^\{"projects":\[.*\],"runners":\[\]\}/);
    expect(out.stdout).toMatch(/^cvreg_[0-9a-f]{64}$/m);
    expect(out.stdout).toContain(
      '{"error":"project example is not registered (conveyor project add example)"}',
    );
    expect(await json(["status"])).toEqual(before);
  });
});

describe("project", () => {
  it("add registers the project and creates its webhook and labels on the forge, which then deliver", async () => {
    const out = await ok(await addArgs("demo"));
    expect(out).toContain("registered demo: forgejo acme/widgets");
    expect(out).toMatch(
      new RegExp(`webhook \\d+: ${worker.url}/hooks/demo \\(issues, issue_comment, pull_request`),
    );
    const hooks = (await forgeGet("/hooks")) as {
      config: { url: string };
      events: string[];
      active: boolean;
    }[];
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ active: true, config: { url: `${worker.url}/hooks/demo` } });
    const labels = ((await forgeGet("/labels")) as { name: string }[]).map((l) => l.name).sort();
    expect(labels).toEqual([
      "P0",
      "P1",
      "P2",
      "P3",
      "P4",
      "action",
      "backlog",
      "blocked",
      "gardener/needs-human",
      "gardener/underspecified",
      "in-progress",
      "needs-human",
      "prediction/backlog",
      "prediction/unreviewed",
      "supervisor",
      "tech-debt",
      "underspecified",
      "vision",
    ]);

    // The forge signs with the secret the CLI generated and the Worker stored: a maintainer's backlog issue is
    // queued (one Conveyor's own account opened would not be: it stands for no writer).
    const maintainer = forge.createUser("maintainer").token;
    forge.addCollaborator(REPO, "maintainer", "write");
    const client = createForgeClient({
      forge: "forgejo",
      apiUrl: forge.apiUrl,
      repo: REPO,
      token: maintainer,
    });
    const { number } = await client.createIssue({ title: "Add a button", body: "", labels: ["backlog"] });
    await forge.settled();
    expect(forge.deliveries().map((d) => d.status)).toContain(202);
    const issue = await json(["issue", "show", String(number), "--project", "demo"]);
    expect(issue).toMatchObject({ project: "demo", number, state: "queued" });
  });

  it("add on a registered project updates it and creates no second webhook unless asked", async () => {
    const out = await ok([...(await addArgs("demo")), "--parallel", "4"]);
    expect(out).toContain("updated demo");
    expect(out).toContain("no webhook created (already registered; --setup creates one)");
    expect(await forgeGet("/hooks")).toHaveLength(1);
    expect((await json(["project", "show", "demo"])).settings.parallel).toBe(4);
  });

  it("--no-setup registers only (token from CONVEYOR_FORGE_TOKEN) and prints the generated webhook secret", async () => {
    // The forge token from the environment, not the command line.
    const out = await ok([...(await addArgs("manual")).slice(0, -2), "--no-setup"], {
      CONVEYOR_FORGE_TOKEN: forgeToken,
    });
    expect(out).toMatch(/webhook secret \(for a webhook you create\): [0-9a-f]{64}/);
    expect(await forgeGet("/hooks")).toHaveLength(1);
  });

  it("add names the secrets the repository's formulas need and the project lacks", async () => {
    const repo = "acme/ops";
    await forge.createRepo({ owner: "acme", name: "ops", seed: { files: { "README.md": "#\n" } } });
    forge.addCollaborator(repo, "conveyor-bot", "admin");
    await pushFiles({
      cloneUrl: forge.cloneUrl(repo, forge.admin.token),
      branch: "main",
      base: "main",
      files: { ".conveyor/formulas/rotate-token.md": ROTATE_TOKEN_MD },
      message: "Add a formula",
    });
    const args = async (extra: string[]) => [
      ...(await addArgs("ops-actions")).map((arg) => (arg === REPO ? repo : arg)),
      "--no-setup",
      ...extra,
    ];
    const lacking = await ok(await args([]));
    expect(lacking).toContain(
      "formula rotate-token needs the secret DEPLOY_TOKEN, which the project lacks: add it with --action-secrets-file",
    );
    const secrets = join(forgeData, "action-secrets.json");
    await writeFile(secrets, '{"DEPLOY_TOKEN": "dt-0123456789"}\n', { mode: 0o600 });
    expect(await ok(await args(["--action-secrets-file", secrets]))).not.toContain("formula rotate-token");
    await ok(["project", "rm", "ops-actions"]);
  });

  it("list and show, never with secrets", async () => {
    const list = await ok(["project", "list"]);
    expect(list).toMatch(/^ID\s+FORGE\s+REPO\s+CLONE URL$/m);
    expect(list).toMatch(/^demo\s+forgejo\s+acme\/widgets\s+http:\/\//m);
    const ids = ((await json(["project", "list"])) as { id: string }[]).map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining(["demo", "manual"]));
    const show = await ok(["project", "show", "demo"]);
    expect(show).toContain(`api        ${forge.apiUrl}`);
    expect(show).not.toContain(forgeToken);
  });

  it("rm unregisters; a second rm is a one-line 404", async () => {
    expect(await ok(["project", "rm", "manual"])).toBe("removed manual\n");
    await fails(["project", "rm", "manual"], 1, /project manual is not registered \(HTTP 404\)/);
    await fails(["project", "show", "manual"], 1, /not registered \(HTTP 404\)/);
  });

  it("a forge that refuses the setup fails the command, after the project is registered", async () => {
    await fails(await addArgs("refused", "wrong-token"), 1, /forgejo: .* returned 401.*\(HTTP 502\)/);
    expect((await json(["project", "show", "refused"])).id).toBe("refused");
    await ok(["project", "rm", "refused"]);
  });

  it.concurrent.each([
    [["--api-url", "not a url"], /apiUrl: /],
    [["--repo", "no-slash"], /repo: repo is owner\/name/],
    [["--forge", "gitlab"], /forge: /],
  ])("add refuses %j before sending anything (exit 2)", async (override, message) => {
    const args = await addArgs("invalid");
    const flag = override[0] ?? "";
    args.splice(args.indexOf(flag), 2, ...override);
    await fails(args, 2, message);
    await fails(["project", "show", "invalid"], 1, /HTTP 404/);
  });
});

describe("runners and status", () => {
  it("runner token makes a one-time registration token", async () => {
    const out = await ok(["runner", "token"]);
    expect(out).toMatch(/^cvreg_[0-9a-f]{64}\none-time; expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n$/);
    const answer = await json(["runner", "token", "--ttl", "120"]);
    expect(answer.expiresAt - Date.now()).toBeGreaterThan(100_000);
    expect(answer.expiresAt - Date.now()).toBeLessThanOrEqual(120_000);
    await fails(["runner", "token", "--ttl", "5"], 2, /ttl: /);
  });

  it("status shows projects with issues per state, and runners", async () => {
    // D1 hears of the webhook's issue from its Durable Object's outbox, a moment after the DO does.
    await until(async () => {
      const res = await fetch(`${worker.url}/api/v1/status`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      return JSON.stringify(await res.json()).includes('"states":{"queued":1}');
    });
    const answer = await json(["status"]);
    const demo = answer.projects.find((p: { id: string }) => p.id === "demo");
    expect(demo).toMatchObject({ repo: REPO, states: { queued: 1 }, total: 1 });
    expect(answer.runners).toEqual([]);
    const out = await ok(["status"]);
    expect(out).toMatch(/^PROJECT\s+REPO\s+ISSUES\s+COST TODAY \/ ALL\s+BY STATE$/m);
    expect(out).toMatch(/^demo\s+acme\/widgets\s+1\s+\$0\.00 \/ \$0\.00\s+queued 1$/m);
    // Spend counts whether or not the project is (still) registered.
    expect(out).toMatch(/^ops\s+\(not registered\)\s+0\s+\$1\.25 \/ \$1\.75$/m);
    expect(answer.projects.find((p: { id: string }) => p.id === "ops")).toMatchObject({
      costUsd: 1.75,
      todayUsd: 1.25,
    });
    expect(out).toContain("no runners");
  });

  it("health shows the supervisor's findings of a project, or of every project", async () => {
    expect(await ok(["health", "--project", "demo"])).toMatch(/^demo: not checked yet$/m);
    const checked = await fetch(`${worker.url}/api/v1/projects/demo/health/check`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(checked.status).toBe(200);
    const answer = await json(["health", "--project", "demo"]);
    expect(answer).toMatchObject({ project: "demo", findings: [], error: null });
    expect(answer.checkedAt).toEqual(expect.any(Number));
    expect(await ok(["health"])).toMatch(/^demo: healthy \(checked .+\)$/m);
    const all = await json(["health"]);
    expect(all.projects.map((h: { project: string }) => h.project)).toContain("demo");
  });

  it("runner token --projects binds the runner; status shows its sandbox; runner revoke ends it", async () => {
    const token = await json(["runner", "token", "--projects", "demo,ops"]);
    expect(token.projects).toEqual(["demo", "ops"]);
    expect(await ok(["runner", "token", "--projects", "demo"])).toContain("binds the runner to demo");
    await fails(["runner", "token", "--projects", "Not A Project"], 2, /^conveyor: projects\.0: /);
    const res = await fetch(`${worker.url}/runner/v1/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        registrationToken: token.token,
        name: "cli-host",
        version: "1.2.3",
        sandbox: "none",
      }),
    });
    const { runnerId } = (await res.json()) as { runnerId: string };
    expect(await ok(["status"])).toMatch(/^cli-host\s+1\.2\.3\s+NONE \(unsafe\)\s+\d+ s ago\s+idle$/m);
    expect(await ok(["runner", "revoke", runnerId])).toBe(`revoked ${runnerId}\n`);
    expect((await json(["status"])).runners).toEqual([]);
    await fails(
      ["runner", "revoke", runnerId],
      1,
      new RegExp(`runner ${runnerId} is unknown \\(HTTP 404\\)`),
    );
  });
});

describe("issues", () => {
  const project = "ops";

  async function seed(number: number, state: keyof typeof PATHS) {
    for (const [i, event] of PATHS[state].entries()) {
      const res = await fetch(`${worker.url}/api/v1/projects/${project}/issues/${number}/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ id: `seed-${number}-${i}`, event }),
      });
      if (!res.ok) throw new Error(`seed: ${res.status} ${await res.text()}`);
    }
  }

  beforeAll(async () => {
    // Operator events apply to registered projects only. Its forge cannot be reached (port 9, discard): the
    // seeded issues' forge effects (a head check among them) wait in the outbox instead of moving them on.
    const args = await addArgs(project);
    args.splice(args.indexOf("--api-url"), 2, "--api-url", "http://127.0.0.1:9/api/v1");
    await ok([...args, "--no-setup"]);
    await seed(40, "awaiting_approval");
    await seed(41, "escalated");
  });

  it("approve merges a held approval; issue show tells the story", async () => {
    expect(await ok(["approve", "40", "--project", project, "--by", "ada"])).toBe(
      "approve: ops#40 is now merging\n",
    );
    const show = await ok(["issue", "show", "40"], { CONVEYOR_PROJECT: project });
    expect(show).toMatch(/^ops#40 {2}merging {2}iteration 1$/m);
    expect(show).toContain("branch conveyor/7 · head abc1234");
    expect(show).toContain("CI fixes 0 · critic rounds 0 · cost $1.75");
    expect(show).toMatch(/human_approval\s+awaiting_approval → merging\s+operator operator:/);
    const view = await json(["issue", "show", "40", "--project", project]);
    expect(view.history.at(-1)).toMatchObject({ event: "human_approval", to: "merging" });
  });

  it("costs: the spend per UTC day and the issues that cost most, of one project or of every one", async () => {
    const day = (at: number) => new Date(at).toISOString().slice(0, 10);
    const today = Math.floor(Date.now() / DAY) * DAY;
    const out = await ok(["costs", "--project", project]);
    expect(out).toMatch(/^ops: \$1\.75 in the last 30 days \(UTC; days without spend left out\)$/m);
    expect(out).toContain(`DAY         COST\n${day(today - DAY)}  $0.50\n${day(today)}  $1.25\n`);
    expect(out).toMatch(/^ISSUE\s+STATE\s+COST\s+TITLE\nops#40\s+merging\s+\$1\.75$/m);
    expect(await json(["costs", "--days", "1"])).toMatchObject({
      project: null,
      totalUsd: 1.25,
      issues: [{ project: "ops", number: 40, usd: 1.25 }],
    });
    await fails(["costs", "--days", "0"], 2, /^conveyor: days: /);
  });

  it("retry and abandon; an event the table refuses exits 1 with its reason", async () => {
    const show = await ok(["issue", "show", "41", "--project", project]);
    expect(show).toMatch(/^escalation 1: session escalated \(from running\)$/m);
    expect(await ok(["retry", "41", "--project", project])).toBe("retry: ops#41 is now queued\n");
    expect((await json(["abandon", "41", "--project", project])).state).toBe("abandoned");
    await fails(
      ["approve", "41", "--project", project],
      1,
      /^conveyor: human_approval does not apply: the issue is abandoned \(HTTP 409\)/,
    );
  });

  it("redeliver of a dead letter the issue does not have exits 1 with the Worker's reason", async () => {
    await fails(
      ["redeliver", "41", "7", "--project", project],
      1,
      /^conveyor: ops#41: issue has no dead letter 7 \(HTTP 404\)/,
    );
    await fails(["redeliver", "41", "x", "--project", project], 2, /the dead letter id must be a number/);
  });

  it("issue list shows the project's issues; --state narrows it; a page says how to go on", async () => {
    const list = await ok(["issue", "list", "--project", project]);
    expect(list).toMatch(/^ISSUE\s+STATE\s+ITER\s+PR\s+UPDATED\s+REASON$/m);
    expect(list).toMatch(/^#40\s+merging\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/m);
    expect(list).toMatch(/^#41\s+abandoned\s+/m);
    expect(await ok(["issue", "list", "--project", project, "--state", "abandoned"])).not.toContain("#40");
    expect(await ok(["issue", "list", "--project", project, "--limit", "1"])).toMatch(/^more: --after 40$/m);
    const page = await json(["issue", "list", "--project", project, "--after", "40"]);
    expect(page.issues.map((i: { number: number }) => i.number)).toEqual([41]);
    expect(await ok(["issue", "list", "--project", project, "--state", "blocked"])).toBe(
      "no issues in ops in blocked\n",
    );
    await fails(["issue", "list", "--project", project, "--state", "sleeping"], 2, /^conveyor: state: /);
  });

  it("project set changes one setting through the Worker's schema", async () => {
    expect(await ok(["project", "set", "parallel", "4", "--project", project])).toBe("ops: parallel = 4\n");
    expect(await ok(["project", "set", "jobs.leaseMs", "120000", "--project", project])).toBe(
      "ops: jobs.leaseMs = 120000\n",
    );
    expect(await ok(["project", "set", "defaultBranch", "123", "--project", project])).toBe(
      'ops: defaultBranch = "123"\n',
    );
    const settings = (await json(["project", "show", project])).settings;
    expect(settings).toMatchObject({ parallel: 4, defaultBranch: "123", jobs: { leaseMs: 120_000 } });
    await fails(
      ["project", "set", "parallel", "0", "--project", project],
      1,
      /^conveyor: parallel: .*\(HTTP 400\)/,
    );
    // A negative number is a value the Worker judges, not a flag.
    await fails(
      ["project", "set", "parallel", "-1", "--project", project],
      1,
      /^conveyor: parallel: .*\(HTTP 400\)\n$/,
    );
    await fails(
      ["project", "set", "paralel", "4", "--project", project],
      1,
      /unknown setting paralel; settings are /,
    );
    await fails(
      ["project", "set", "forgeToken", "x", "--project", project],
      1,
      /forgeToken is part of the project's registration, not a setting/,
    );
    await fails(
      ["project", "set", "parallel", "4", "--project", "nope"],
      1,
      /project nope is not registered \(HTTP 404\)/,
    );
    expect((await json(["project", "show", project])).settings.parallel).toBe(4);
  });

  it("an operator event for an unregistered project exits 1 with the Worker's one-line reason", async () => {
    await fails(
      ["retry", "1", "--project", "nowhere"],
      1,
      /^conveyor: project nowhere is not registered \(conveyor project add nowhere\) \(HTTP 404\)/,
    );
  });

  it.concurrent.each([
    [
      ["issue", "show", "999", "--project", project],
      1,
      /issue ops#999 is not known to Conveyor \(HTTP 404\)/,
    ],
    [["issue", "show", "1", "--project", "nope"], 1, /^conveyor: project nope is not registered/],
    [["issue", "list", "--project", "nope"], 1, /^conveyor: project nope is not registered/],
  ] as const)("%j exits %i", async (args, code, message) => {
    await fails([...args], code, message);
  });
});

describe("vault", () => {
  const project = "vlt";

  // A merge held for a protected path becomes the vault's item; the project's forge is the local one, so its
  // effects run (labels, the vault request, the notice naming the item). No model key: the classifier asks.
  beforeAll(async () => {
    // A repository of its own, with a main branch to push the issue's branch from.
    const repo = "acme/vault";
    await forge.createRepo({ owner: "acme", name: "vault", seed: { files: { "README.md": "# vault\n" } } });
    forge.addCollaborator(repo, "conveyor-bot", "admin");
    const args = await addArgs(project);
    args.splice(args.indexOf("--repo"), 2, "--repo", repo);
    await ok(args);
    const client = createForgeClient({ forge: "forgejo", apiUrl: forge.apiUrl, repo, token: forgeToken });
    const { number } = await client.createIssue({ title: "Pin the CI image", body: "Pin it.", labels: [] });
    const branch = `conveyor/${number}`;
    const headSha = await pushFiles({
      cloneUrl: forge.cloneUrl(repo, forge.admin.token),
      branch,
      base: "main",
      files: { ".woodpecker.yml": "steps: []\n" },
      message: "Pin the CI image",
    });
    const events = [
      { type: "triage", blockers: [] },
      { type: "dispatched", jobId: "job-1", runnerId: "runner-1" },
      { type: "phase", phase: "awaiting_ci", headSha, branch, sessionId: "sess-1" },
      { type: "ci", result: "green", headSha },
      { type: "review", verdict: "APPROVE", summary: "ok", needsHumanApproval: "touches protected paths" },
    ];
    for (const [i, event] of events.entries()) {
      const res = await fetch(`${worker.url}/api/v1/projects/${project}/issues/${number}/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ id: `vault-seed-${i}`, event }),
      });
      if (!res.ok) throw new Error(`seed: ${res.status} ${await res.text()}`);
    }
    await until(async () => (await json(["vault", "list", "--project", project])).items.length > 0, 20_000);
  }, 60_000);

  it("vault list, approve once, and the refusals", { timeout: 60_000 }, async () => {
    const list = await ok(["vault", "list", "--project", project]);
    expect(list).toMatch(/^ID\s+KIND\s+STATE\s+EXPIRES\s+TITLE\s+OUTCOME$/m);
    expect(list).toMatch(/^v1\s+protected_merge\s+pending\s+.*classifier: ask \(classifier: no model key/m);
    expect(await ok(["vault", "list"])).toMatch(/^vlt\s+v1\s+protected_merge\s+pending/m);
    // Approved; it fires once the issue acts on it (its merge).
    expect(await ok(["vault", "approve", "v1", "--project", project])).toBe(
      "v1 approved: approved by operator\n",
    );
    await fails(
      ["vault", "reject", "1", "--project", project, "--reason", "late"],
      1,
      /v1 (is already|was) approved by operator .*\(HTTP 409\)/,
    );
    await fails(["vault", "approve", "v9", "--project", project], 1, /no vault item v9 \(HTTP 404\)/);
    await fails(["vault", "approve", "x9", "--project", project], 2, /a vault item id looks like v7/);
    // The lists read D1, which the project's Durable Object writes a moment later.
    await until(async () => !/^vlt\s+v1/m.test(await ok(["vault", "list"])));
  });
});

it("a wrong token exits 1 with the Worker's one-line reason", async () => {
  await fails(["status"], 1, /invalid operator token \(HTTP 401\)/, { CONVEYOR_TOKEN: "wrong" });
});

it("outcomes: the window's figures, per day, the causes and the waits; or one table as CSV", async () => {
  const window = ["--from", "2026-11-01", "--to", "2026-11-02"];
  const text = await ok(["outcomes", ...window]);
  expect(text).toMatch(/^every project: 2026-11-01 … 2026-11-02 \(UTC days\)$/m);
  expect(text).toContain("merged 2 (3 finished) · label → merged p50 5 h 00 min, p90 10 h 00 min");
  expect(text).toMatch(/^2026-11-01\s+2\s+5 h 00 min\s+10 h 00 min\s+50%/m);
  expect(text).toMatch(/^1\s+the session stopped/m);
  const csv = await ok(["outcomes", ...window, "--csv", "--table", "waiting"]);
  expect(csv.split("\r\n").slice(0, 2)).toEqual(["state,ms", `escalated,${4 * 3_600_000}`]);
  await fails(["outcomes", "--from", "Nov 1"], 2, /a date is YYYY-MM-DD/);
});

it("as a process, a refusal exits 1 with one line on stderr", async () => {
  expect(await bin(["status"], { CONVEYOR_URL: worker.url, CONVEYOR_TOKEN: "wrong" })).toEqual({
    code: 1,
    stdout: "",
    stderr: "conveyor: invalid operator token (HTTP 401)\n",
  });
});

/**
 * Parallel work converges, end to end: the local forge and its CI, the Worker under wrangler dev, the critic
 * on the Messages-API stand-in, one runner process with the scripted driver (real git, real worktrees). Two
 * pairs of issues, each pair queued at once with `parallel: 2`: one pair edits the same line of one file (the
 * second pull request conflicts and an update job of its own session resolves it), the other adds separate
 * files (the second pull request is behind and the forge brings it up to date, no session).
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git } from "../../../runner/git/exec.ts";
import { createForgeClient, type ForgeClient, type Plain } from "../../../src/forge/client/index.ts";
import { settingsSchema } from "../../../src/projects/config.ts";
import { type LocalForge, startLocalForge } from "../../support/forge/index.ts";
import { use } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { type LocalWorker, startLocalWorker, TEST_ADMIN_TOKEN } from "../../support/worker.ts";
import { tempDir } from "../git/support.ts";
import { type RunnerProcess, startRunner } from "../runner/support/runner-process.ts";

const LINES = "one\ntwo\nthree\n";
const phase = `printf 'PHASE:awaiting_ci\\n' > "$CONVEYOR_PHASE_FILE"`;
const issueNumber = "n=$(git branch --show-current | cut -d/ -f2)";
/**
 * Both sessions of a pair wait in `dir` until both are at work, so both start from one base whatever the load
 * (a second session claimed after the first had merged would find nothing to converge). Bounded: a pair that
 * never meets fails the assertions, not the run.
 */
const meet = (dir: string) =>
  `[ -f vague ] || { ${issueNumber}; pair='${dir}'/$([ -f shared.txt ] && echo overlap || echo apart); mkdir -p "$pair" && touch "$pair/$n"; i=0; while [ "$(ls "$pair" | wc -l)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; }`;
/** Each session, whatever its issue: the overlapping pair rewrites line 2, the other pair adds its own file. */
const script = (meetingDir: string) => ({
  implement: [
    { run: meet(meetingDir) },
    // A repository marked so: the session finds its issue too vague, says so and stops.
    {
      run: `if [ -f vague ]; then printf 'PHASE:needs_human\\nReason: underspecified: which greeting?\\n' > "$CONVEYOR_PHASE_FILE"; fi`,
    },
    {
      run: `[ -f vague ] || { ${issueNumber}; if [ -f shared.txt ]; then printf 'one\\nissue %s\\nthree\\n' "$n" > shared.txt; else printf '%s\\n' "$n" > "own-$n.txt"; fi; git add -A && git commit -qm "Work on #$n" && ${phase}; }`,
    },
  ],
  // Both sides' intent kept on the line: theirs from the base, then this issue's.
  update: [
    {
      run: `${issueNumber}; git merge -q --no-edit origin/main >/dev/null 2>&1; theirs=$(git show origin/main:shared.txt | sed -n 2p); printf 'one\\n%s, issue %s\\nthree\\n' "$theirs" "$n" > shared.txt; git add -A && git commit -qm "Merge main into conveyor/$n" && ${phase}`,
    },
  ],
});

type View = {
  state: string;
  reason: string | null;
  headSha: string | null;
  prNumber: number | null;
  updates: number;
  history: { event: string; to: string; outcome: string }[];
};

let root = "";
let forge: LocalForge;
let model: ModelStandIn;
let worker: LocalWorker;
let runner: RunnerProcess;
const people: Record<string, { login: string; token: string }> = {};

async function operator(method: string, path: string, body?: unknown) {
  const res = await fetch(`${worker.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const client = (repo: string, who = people.conveyor): ForgeClient<Plain> =>
  createForgeClient({
    forge: "forgejo",
    apiUrl: forge.apiUrl,
    repo: `acme/${repo}`,
    token: who?.token ?? "",
  });

/** A repository and a project for it with `parallel: 2`, its labels and its webhook. */
async function project(name: string, files: Record<string, string>, settings: object = {}) {
  const repo = await forge.createRepo({
    owner: "acme",
    name,
    seed: { files: { ...files, "ci.sh": "exit 0\n" } },
  });
  forge.addCollaborator(repo.fullName, "conveyor", "admin");
  forge.addCollaborator(repo.fullName, "conveyor-runner", "write");
  forge.addCollaborator(repo.fullName, "maintainer", "write");
  const webhookSecret = randomBytes(24).toString("hex");
  await operator("PUT", `/api/v1/projects/${name}`, {
    forge: "forgejo",
    apiUrl: forge.apiUrl,
    repo: repo.fullName,
    webhookSecret,
    forgeToken: people.conveyor?.token,
    ci: { kind: "woodpecker", contextPattern: "ci/woodpecker/*" },
    parallel: 2,
    ...settings,
  });
  const conveyor = client(name);
  await conveyor.ensureLabels(Object.values(settingsSchema.parse({}).labels));
  await conveyor.createWebhook({
    url: `${worker.url}/hooks/${name}`,
    secret: webhookSecret,
    events: ["issues", "issue_comment", "pull_request"],
  });
}

/** Files both issues, then queues both at once, as a maintainer. */
async function queuePair(name: string): Promise<number[]> {
  const maintainer = client(name, people.maintainer);
  const numbers: number[] = [];
  for (const title of ["First", "Second"]) {
    numbers.push(
      (await maintainer.createIssue({ title: `${title} change`, body: "Edit it.", labels: [] })).number,
    );
  }
  await Promise.all(numbers.map((n) => maintainer.addLabels(n, ["backlog"])));
  return numbers;
}

async function untilEnded(name: string, numbers: number[], timeoutMs = 120_000): Promise<View[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const views = (await Promise.all(
      numbers.map((n) => operator("GET", `/api/v1/projects/${name}/issues/${n}`).catch(() => null)),
    )) as (View | null)[];
    if (
      views.every((v) => v && (v.state === "merged" || v.state === "escalated" || v.state === "abandoned"))
    ) {
      return views as View[];
    }
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(views.map((v) => v?.state))}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const worktrees = async () => {
  const dir = join(root, "runner", "work", "worktrees");
  const repos = await readdir(dir).catch(() => []);
  const all = await Promise.all(repos.map((repo) => readdir(join(dir, repo)).catch(() => [])));
  return all.flat().length;
};

let overlapping: View[] = [];
let separate: View[] = [];
let pairs: { overlap: number[]; apart: number[] };
let vague: { number: number; view: View };

beforeAll(async () => {
  root = await tempDir("converge-e2e");
  forge = await startLocalForge({ dataDir: join(root, "forge") });
  for (const login of ["conveyor", "conveyor-runner", "maintainer"]) people[login] = forge.createUser(login);
  model = await startModelStandIn({
    script: [
      { forced: "report", steps: [use("report", { verdict: "APPROVE", summary: "Fine.", findings: [] })] },
    ],
  });
  worker = await startLocalWorker({
    stateDir: join(root, "worker"),
    vars: { ANTHROPIC_API_KEY: "sk-ant-converge-stand-in", ANTHROPIC_BASE_URL: model.url },
  });
  await project("overlap", { "shared.txt": LINES });
  await project("apart", { "README.md": "# apart\n" });
  // Kept for a second only: the retention of an escalated issue's worktree, made short.
  await project("vague", { vague: "" }, { timeouts: { retention: 1_000 } });
  const { token } = (await operator("POST", "/api/v1/runners/tokens", {})) as { token: string };
  const scriptFile = join(root, "script.json");
  await writeFile(scriptFile, JSON.stringify(script(join(root, "meetings"))));
  const configFile = join(root, "runner.json");
  await writeFile(
    configFile,
    JSON.stringify({
      workerUrl: worker.url,
      registrationToken: token,
      name: "converge-runner",
      workDir: join(root, "runner", "work"),
      driver: "scripted",
      script: scriptFile,
      git: { username: "conveyor-runner", token: people["conveyor-runner"]?.token },
      concurrency: 8,
      claimWaitMs: 2_000,
      shutdownGraceMs: 2_000,
      unsafeNoSandbox: true,
    }),
    { mode: 0o600 },
  );
  runner = startRunner(configFile);
  pairs = { overlap: await queuePair("overlap"), apart: await queuePair("apart") };
  const filed = await client("vague", people.maintainer).createIssue({
    title: "Greet",
    body: "Greet.",
    labels: [],
  });
  await client("vague", people.maintainer).addLabels(filed.number, ["backlog"]);
  let vagueViews: View[];
  [overlapping, separate, vagueViews] = await Promise.all([
    untilEnded("overlap", pairs.overlap),
    untilEnded("apart", pairs.apart),
    untilEnded("vague", [filed.number]),
  ]);
  vague = { number: filed.number, view: vagueViews[0] as View };
}, 240_000);

afterAll(async () => {
  runner?.process.kill("SIGTERM");
  await runner?.exit;
  await worker?.stop();
  await model?.close();
  await forge?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** The default branch's files, from a fresh clone. */
async function mainFiles(name: string): Promise<Record<string, string>> {
  const dir = join(root, `clone-${name}`);
  await git(["clone", "--quiet", forge.cloneUrl(`acme/${name}`, people.maintainer?.token ?? ""), dir]);
  const names = (await git(["ls-files"], { cwd: dir })).split("\n").filter(Boolean);
  return Object.fromEntries(
    await Promise.all(names.map(async (f) => [f, await readFile(join(dir, f), "utf8")])),
  );
}

const applied = (view: View) =>
  view.history.filter((h) => h.outcome === "applied").map((h) => `${h.event}>${h.to}`);

describe("parallel work converges on the local forge", () => {
  it("merges both issues editing the same line, the second after its own session resolved the conflict", async () => {
    expect(
      overlapping.map((v) => v.state),
      runner.lines.slice(-20).join("\n"),
    ).toEqual(["merged", "merged"]);
    const resolved = overlapping.filter((v) => applied(v).includes("conflict>revising"));
    expect(resolved).toHaveLength(1);
    const [second] = resolved;
    // After the update job's push: CI and the critic on that head, then the merge of that head.
    const after = applied(second as View).slice(applied(second as View).indexOf("conflict>revising"));
    expect(after).toEqual([
      "conflict>revising",
      "dispatched>revising",
      "phase>awaiting_ci",
      "ci>awaiting_review",
      "review>merging",
      "merge_confirmed>merged",
    ]);
    // The default branch has both changes: the first's line, then the second's, as its session merged them.
    const [first, last] =
      overlapping.indexOf(second as View) === 0 ? [...pairs.overlap].reverse() : pairs.overlap;
    expect((await mainFiles("overlap"))["shared.txt"]).toBe(`one\nissue ${first}, issue ${last}\nthree\n`);
  });

  it("brings the second of two separate changes up to date without a session, and merges both", async () => {
    expect(separate.map((v) => v.state)).toEqual(["merged", "merged"]);
    const updated = separate.filter((v) => applied(v).includes("branch_updated>awaiting_ci"));
    expect(updated).toHaveLength(1);
    const [second] = updated;
    const after = applied(second as View).slice(
      applied(second as View).indexOf("branch_updated>awaiting_ci"),
    );
    expect(after).toEqual([
      "branch_updated>awaiting_ci",
      "ci>awaiting_review",
      "review>merging",
      "merge_confirmed>merged",
    ]);
    for (const v of separate) expect(applied(v).some((e) => e.startsWith("conflict"))).toBe(false);
    const files = await mainFiles("apart");
    for (const n of pairs.apart) expect(files[`own-${n}.txt`]).toBe(`${n}\n`);
  });

  it("labels an issue the session found too vague, posts why, opens no pull request", async () => {
    expect(vague.view).toMatchObject({
      state: "escalated",
      prNumber: null,
      reason: "the session judged the issue underspecified: which greeting?",
    });
    const forgeIssue = () => client("vague").getIssue(vague.number);
    for (let i = 0; i < 60 && !(await forgeIssue()).labels.includes("underspecified"); i++) {
      await new Promise((r) => setTimeout(r, 500));
    }
    expect((await forgeIssue()).labels).toEqual(expect.arrayContaining(["underspecified", "needs-human"]));
    expect(await client("vague").getBranchHead(`conveyor/${vague.number}`)).toBeNull();
  }, 60_000);

  it("deletes the merged branches and reaps every worktree, the escalated one's after its retention", async () => {
    for (const [name, numbers] of Object.entries(pairs)) {
      for (const n of numbers) {
        for (let i = 0; i < 60 && (await client(name).getBranchHead(`conveyor/${n}`)) !== null; i++) {
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(await client(name).getBranchHead(`conveyor/${n}`)).toBeNull();
      }
    }
    for (let i = 0; i < 60 && (await worktrees()) > 0; i++) await new Promise((r) => setTimeout(r, 500));
    expect(await worktrees()).toBe(0);
  }, 90_000);
});

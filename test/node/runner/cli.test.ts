import { rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Script } from "../../../runner/drivers/scripted.ts";
import { git } from "../../../runner/git/exec.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../git/support.ts";
import { makeJob } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";
import { type RunnerProcess, startRunner } from "./support/runner-process.ts";

const GIT_USER = "conveyor-bot";
const GIT_TOKEN = "git-token-5e8d1c7a9b";
const API_KEY = "sk-ant-cli-0123456789";

const SCRIPT: Script = {
  implement: [{ write: "greeting.txt", content: "hello\n" }, { phase: "awaiting_ci" }],
  // The first attempt hangs (and is killed); the one after the restart goes through. The mark is in the
  // worktree's .git: the sandbox keeps nothing outside the worktree between attempts, nor commits .git.
  revise: [
    { run: "test -f .git/attempted || { touch .git/attempted; sleep 10; }" },
    { write: "greeting.txt", content: "hello, world\n" },
    { phase: "awaiting_ci" },
  ],
  resume: [{ sleep: 30_000 }],
};

let root = "";
let upstream: Upstream;
let gitServer: GitHttpServer;
let worker: FakeWorker;
let configFile = "";

beforeAll(async () => {
  root = await tempDir("runner-cli");
  upstream = await Upstream.create(root);
  gitServer = await startGitHttpServer(root, GIT_USER, GIT_TOKEN);
  worker = await FakeWorker.start({ leaseMs: 3_000 });
  const scriptFile = join(root, "script.json");
  await writeFile(scriptFile, JSON.stringify(SCRIPT));
  configFile = join(root, "runner.json");
  await writeFile(
    configFile,
    JSON.stringify({
      workerUrl: worker.url,
      registrationToken: worker.registrationToken,
      workDir: join(root, "work"),
      concurrency: 2,
      projects: ["demo"],
      driver: "scripted",
      script: scriptFile,
      git: { username: GIT_USER, token: GIT_TOKEN },
      anthropic: { apiKey: API_KEY },
      logLevel: "debug",
      claimWaitMs: 2_000,
      shutdownGraceMs: 500,
    }),
  );
});

afterAll(async () => {
  expect(worker.violations).toEqual([]);
  await Promise.all([worker.close(), gitServer.close()]);
  await rm(root, { recursive: true, force: true });
});

const job = (id: string, kind: "implement" | "revise" | "resume") =>
  makeJob({ id, kind, cloneUrl: gitServer.url("upstream.git"), iteration: 1 });

/** SIGKILL, and wait until the Worker saw its polls go: none of them may take the next job. */
async function kill(runner: RunnerProcess) {
  runner.process.kill("SIGKILL");
  await runner.exit;
  await worker.waitFor(() => worker.openPolls === 0);
}

function sessionStarted(jobId: string) {
  return worker.waitFor(() => worker.events.get(jobId)?.some((e) => e.kind === "session"));
}

/** Every stderr line is a JSON object, and none shows a secret. */
function expectCleanLogs(lines: string[]) {
  const secrets = [worker.registrationToken, ...worker.tokens, GIT_TOKEN, API_KEY];
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect(JSON.parse(line)).toBeTypeOf("object");
    for (const secret of secrets) expect(line).not.toContain(secret);
  }
}

describe("conveyor-runner as a process", { timeout: 30_000 }, () => {
  it("registers once, runs a job and pushes with its credential", async () => {
    const runner = startRunner(configFile);
    worker.enqueue(job("job-1", "implement"));
    await worker.waitFor(() => worker.outcome("job-1"));

    expect(worker.outcome("job-1")).toMatchObject({
      kind: "complete",
      body: { phase: "awaiting_ci", headSha: await upstream.sha("conveyor/7") },
    });
    expect(worker.callsOf("register")).toHaveLength(1);
    expect((await stat(join(root, "work", ".conveyor-runner-identity.json"))).mode & 0o777).toBe(0o600);
    expect(gitServer.requests.some((r) => r.url.includes("git-receive-pack"))).toBe(true);

    await kill(runner);
    expectCleanLogs(runner.lines);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "refuses to start as root unless told so, in one line saying why and what to do",
    async () => {
      const { CONVEYOR_ALLOW_ROOT: _allowed, ...env } = process.env;
      const registered = worker.callsOf("register").length;
      const runner = startRunner(configFile, [], env);
      expect(await runner.exit).toBe(2);
      expect(runner.lines).toEqual([
        expect.stringMatching(
          /^conveyor-runner: refusing to run as root: .* unprivileged user .* --allow-root/,
        ),
      ]);
      expect(worker.callsOf("register")).toHaveLength(registered);
    },
  );

  it("re-attaches after SIGKILL: same token, same worktree, affinity in its claims", async () => {
    const first = startRunner(configFile);
    worker.enqueue(job("job-2", "revise"));
    await sessionStarted("job-2");
    await kill(first);
    worker.expire("job-2");
    const claimsBefore = worker.callsOf("claim").length;

    const second = startRunner(configFile);
    await worker.waitFor(() => worker.outcome("job-2"));
    expect(worker.outcome("job-2")).toMatchObject({ kind: "complete", body: { phase: "awaiting_ci" } });
    expect(worker.callsOf("register")).toHaveLength(1);
    expect(worker.callsOf("claim")[claimsBefore]?.body).toMatchObject({
      holding: ["demo#7"],
      projects: ["demo"],
    });
    const attach = second.lines.map((l) => JSON.parse(l)).find((l) => l.msg === "worktree ready");
    expect(attach).toMatchObject({ job: "job-2", attempt: 2, from: "existing" });
    const log = await gitLog();
    expect(log).toEqual(["Conveyor: uncommitted work on #7", "Conveyor: uncommitted work on #7"]);

    // SIGTERM: no more claims; the running job gets the grace period, then is aborted and reported.
    worker.enqueue(job("job-3", "resume"));
    await sessionStarted("job-3");
    const stopping = Date.now();
    second.process.kill("SIGTERM");
    expect(await second.exit).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(3_000);
    expect(worker.outcome("job-3")).toMatchObject({ kind: "fail", body: { retryable: true } });
    expectCleanLogs([...first.lines, ...second.lines]);
  });
});

async function gitLog(): Promise<string[]> {
  return (await git(["-C", upstream.path, "log", "--format=%s", "main..conveyor/7"])).trim().split("\n");
}

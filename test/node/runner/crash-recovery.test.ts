import { realpathSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { git } from "../../../runner/git/exec.ts";
import { killLeftoverSessions } from "../../../runner/leftovers.ts";
import { bash, text, toScriptRequest, write } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { type LocalWorker, startLocalWorker } from "../../support/worker.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../git/support.ts";
import { LeaseLedger } from "./support/lease-ledger.ts";
import { logLines, until } from "./support/observe.ts";
import { Operator, writeRunnerConfig } from "./support/operator.ts";
import { alive, descendants } from "./support/process-tree.ts";
import { type RunnerProcess, startRunner } from "./support/runner-process.ts";

const GIT_TOKEN = "git-token-crash-31";
/** The least `jobs.leaseMs` a project may set: the dead runner's lease runs out soonest. */
const LEASE_MS = 10_000;
const SET_PHASE = 'printf "PHASE:awaiting_ci\\n" > "$CONVEYOR_PHASE_FILE"';
// Claude Code refuses a standalone `sleep`; a slow test run it takes as it is.
const SLOW_TESTS = "timeout 30 tail -f /dev/null; echo tests passed";
const COMMIT = `git add greeting.txt && git commit -qm "Add greeting" && ${SET_PHASE}`;

let root = "";
let upstream: Upstream;
let gitServer: GitHttpServer;
let standIn: ModelStandIn;
let worker: LocalWorker;
let ledger: LeaseLedger;
let operator: Operator;
let configFile = "";
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  root = await tempDir("runner-crash");
  upstream = await Upstream.create(root);
  [gitServer, standIn, worker] = await Promise.all([
    startGitHttpServer(root, "conveyor-bot", GIT_TOKEN),
    startModelStandIn({
      script: [
        // The runner is killed while the slow tests run.
        {
          when: /Implement issue #7 /,
          steps: [write("greeting.txt", "hello\n"), bash(SLOW_TESTS), bash(COMMIT), text("Done.")],
        },
        {
          when: /Conveyor continues issue #7\. The last session was interrupted/,
          steps: [bash(COMMIT), text("Resumed.")],
        },
      ],
    }),
    startLocalWorker({ stateDir: join(root, "worker-state") }),
  ]);
  ledger = await LeaseLedger.start(worker.url);
  operator = new Operator(worker.url);
  await operator.registerProject("demo", gitServer.url("upstream.git"), { jobs: { leaseMs: LEASE_MS } });
  configFile = await writeRunnerConfig(join(root, "runner.json"), {
    workerUrl: ledger.url,
    registrationToken: await operator.registrationToken(),
    workDir: join(root, "work"),
    git: { username: "conveyor-bot", token: GIT_TOKEN },
    anthropic: { baseUrl: standIn.url, apiKey: "sk-ant-crash-0123456789" },
  });
}, 60_000);

afterAll(async () => {
  for (const runner of runners) runner.process.kill("SIGKILL");
  // What a failing test left of the killed runner's session.
  if (root) await killLeftoverSessions(join(realpathSync(root), "work", "agents"));
  await Promise.all([worker?.stop(), gitServer?.close(), standIn?.close(), ledger?.close()]);
  await rm(root, { recursive: true, force: true });
});

it("resumes the session of a runner killed mid-session: one lease at a time, one push", async () => {
  const first = startRunner(configFile);
  runners.push(first);
  await operator.triage("demo", 7);
  const session = await until(() => {
    const tree = descendants(first.process.pid ?? 0);
    return tree.some((p) => p.command === "tail -f /dev/null") && tree;
  });
  const requestsBefore = standIn.requests.length;
  first.process.kill("SIGKILL");
  await first.exit;
  // The sandbox dies with the runner: Claude Code and its tool processes with it (the tests would run 30 s).
  await until(() => session.every((p) => !alive(p.pid)), 5_000);

  const second = startRunner(configFile);
  runners.push(second);
  await until(() => logLines(second).some((line) => line.msg === "runner started"));
  // So the restarted runner found nothing of them to kill.
  expect(logLines(second).some((line) => Array.isArray(line.pids))).toBe(false);

  const view = await operator.waitForIssue("demo", 7, "awaiting_ci");
  const [lease1, lease2, ...more] = ledger.leases;
  if (!lease1 || !lease2) throw new Error("the job was leased fewer than two times");
  expect(more).toEqual([]);

  // One job, leased to the same runner twice, never at once: the second lease began after the first expired.
  expect([lease1, lease2]).toMatchObject([
    { jobId: lease1.jobId, attempt: 1, end: null, refused: 0 },
    { jobId: lease1.jobId, attempt: 2, end: "complete", runner: lease1.runner },
  ]);
  expect(lease2.grantedAt).toBeGreaterThanOrEqual(lease1.lastExpiry);
  expect(view.history.map((h) => h.eventId)).toEqual([
    expect.stringMatching(/^operator:/),
    `job:${lease1.jobId}:1:dispatched`,
    `job:${lease1.jobId}:2:dispatched`,
    `job:${lease1.jobId}:complete`,
  ]);

  // The same session throughout: two requests before the kill, none from the dead sandbox, two resumed,
  // which carry the transcript as far as it was written (the Write of greeting.txt).
  expect(requestsBefore).toBe(2);
  expect(standIn.requests.map((r) => r.headers["x-claude-code-session-id"])).toEqual(
    Array(4).fill(view.sessionId),
  );
  const resumed = toScriptRequest(standIn.requests[requestsBefore]?.body ?? {});
  expect(resumed.lastUserText).toMatch(/^Conveyor continues issue #7\. The last session was interrupted/);
  expect(JSON.stringify(resumed.messages)).toContain('"file_path":"greeting.txt"');

  // One push, of the resumed session's commit.
  expect(gitServer.requests.filter((r) => r.url.endsWith("/git-receive-pack"))).toHaveLength(1);
  expect([...logLines(first), ...logLines(second)].filter((l) => l.msg === "pushed")).toHaveLength(1);
  expect(view.headSha).toBe(await upstream.sha("conveyor/7"));
  const log = await git(["-C", upstream.path, "log", "--format=%s", "main..conveyor/7"]);
  expect(log.trim().split("\n")).toEqual(["Add greeting"]);
}, 60_000);

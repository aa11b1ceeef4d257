/** The real runner against the real Worker, with runner tokens that last 10 s: it rotates them and works on. */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Script } from "../../../runner/drivers/scripted.ts";
import { type LocalWorker, startLocalWorker } from "../../support/worker.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../git/support.ts";
import { logLines, until } from "./support/observe.ts";
import { Operator, writeRunnerConfig } from "./support/operator.ts";
import { type RunnerProcess, startRunner } from "./support/runner-process.ts";

const TTL_SECONDS = 10;
const GIT_TOKEN = "git-token-rotation-31";
const SCRIPT: Script = {
  implement: [{ write: "greeting.txt", content: "hello\n" }, { phase: "awaiting_ci" }],
};

let root = "";
let gitServer: GitHttpServer;
let worker: LocalWorker;
let operator: Operator;
let runner: RunnerProcess;
let identityFile = "";

beforeAll(async () => {
  root = await tempDir("runner-rotation");
  await Upstream.create(root);
  [gitServer, worker] = await Promise.all([
    startGitHttpServer(root, "conveyor-bot", GIT_TOKEN),
    startLocalWorker({
      stateDir: join(root, "worker-state"),
      vars: { RUNNER_TOKEN_TTL_SECONDS: String(TTL_SECONDS) },
    }),
  ]);
  operator = new Operator(worker.url);
  await operator.registerProject("demo", gitServer.url("upstream.git"));
  const scriptFile = join(root, "script.json");
  await writeFile(scriptFile, JSON.stringify(SCRIPT));
  const config = await writeRunnerConfig(join(root, "runner.json"), {
    workerUrl: worker.url,
    registrationToken: await operator.registrationToken(),
    workDir: join(root, "work"),
    driver: "scripted",
    script: scriptFile,
    git: { username: "conveyor-bot", token: GIT_TOKEN },
    claimWaitMs: 1_000,
  });
  identityFile = join(root, "work", ".conveyor-runner-identity.json");
  runner = startRunner(config);
}, 90_000);

afterAll(async () => {
  runner?.process.kill("SIGTERM");
  await runner?.exit;
  await Promise.all([worker?.stop(), gitServer?.close()]);
  await rm(root, { recursive: true, force: true });
});

const storedToken = async () => {
  try {
    return (JSON.parse(await readFile(identityFile, "utf8")) as { token: string }).token;
  } catch {
    return undefined;
  }
};

const claimWith = (token: string) =>
  fetch(`${worker.url}/runner/v1/claim`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ waitMs: 0, projects: ["idle"] }),
  });

it("rotates its token before expiry, stores it, and keeps working long after the first token expired", async () => {
  let first = await storedToken();
  for (const deadline = Date.now() + 20_000; !first && Date.now() < deadline; first = await storedToken()) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const registeredAt = Date.now();
  // Rotations are due after half the lifetime; wait past the first token's expiry and a second rotation.
  const rotated = () => logLines(runner).filter((line) => line.msg === "runner token rotated");
  await until(() => rotated().length >= 2 && Date.now() > registeredAt + TTL_SECONDS * 1000, 30_000);
  const rotations = rotated();
  expect(rotations.length).toBeGreaterThanOrEqual(2);
  expect(Date.now()).toBeGreaterThan(registeredAt + TTL_SECONDS * 1000);

  const current = await storedToken();
  expect(current).toMatch(/^cvr_[0-9a-f]{64}$/);
  expect(current).not.toBe(first);
  expect((await claimWith(first ?? "")).status).toBe(401);

  await operator.triage("demo", 1);
  const view = await operator.waitForIssue("demo", 1, "awaiting_ci");
  expect(view.branch).toBe("conveyor/1");
  expect(runner.process.exitCode).toBeNull();

  const tokens = [first, current, GIT_TOKEN];
  for (const line of runner.lines) for (const token of tokens) expect(line).not.toContain(token);
}, 60_000);

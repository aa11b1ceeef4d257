import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bash, edit, text, write } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { type LocalWorker, startLocalWorker, TEST_ADMIN_TOKEN } from "../../support/worker.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../git/support.ts";
import { type RunnerProcess, startRunner } from "./support/runner-process.ts";

const GIT_TOKEN = "git-token-acceptance-77";
const API_KEY = "sk-ant-acceptance-0123456789";
const SET_PHASE = 'printf "PHASE:awaiting_ci\\n" > "$CONVEYOR_PHASE_FILE"';

let root = "";
let upstream: Upstream;
let gitServer: GitHttpServer;
let standIn: ModelStandIn;
let worker: LocalWorker;
let runner: RunnerProcess;
let registrationToken = "";

type IssueView = { state: string; branch: string | null; headSha: string | null; sessionId: string | null };

beforeAll(async () => {
  root = await tempDir("runner-acceptance");
  upstream = await Upstream.create(root);
  [gitServer, standIn, worker] = await Promise.all([
    startGitHttpServer(root, "conveyor-bot", GIT_TOKEN),
    startModelStandIn({
      script: [
        {
          when: /Implement issue #7 /,
          steps: [
            write("greeting.txt", "hello\n"),
            bash(`git add greeting.txt && git commit -qm "Add greeting" && ${SET_PHASE}`),
            text("Done."),
          ],
        },
        {
          when: /test_greeting failed/,
          steps: [
            edit("greeting.txt", "hello", "hello, world"),
            bash(`git commit -qam "Fix greeting" && ${SET_PHASE}`),
            text("Fixed."),
          ],
        },
      ],
    }),
    startLocalWorker({ stateDir: join(root, "worker-state") }),
  ]);
  await operator("PUT", "/api/v1/projects/demo", {
    forge: "forgejo",
    // No forge here: labels and comments wait in the IssueDO's outbox; jobs go their own way.
    apiUrl: "http://127.0.0.1:9/api/v1",
    repo: "acme/widgets",
    cloneUrl: gitServer.url("upstream.git"),
    webhookSecret: "s".repeat(16),
    forgeToken: "forge-token",
  });
  ({ token: registrationToken } = (await operator("POST", "/api/v1/runners/tokens", {})) as {
    token: string;
  });
  const configFile = join(root, "runner.json");
  await writeFile(
    configFile,
    JSON.stringify({
      workerUrl: worker.url,
      registrationToken,
      workDir: join(root, "work"),
      git: { username: "conveyor-bot", token: GIT_TOKEN },
      anthropic: { baseUrl: standIn.url, apiKey: API_KEY },
      claimWaitMs: 5_000,
      shutdownGraceMs: 1_000,
    }),
  );
  runner = startRunner(configFile);
}, 90_000);

afterAll(async () => {
  runner?.process.kill("SIGTERM");
  await runner?.exit;
  await Promise.all([worker?.stop(), gitServer?.close(), standIn?.close()]);
  await rm(root, { recursive: true, force: true });
});

async function operator(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${worker.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function issueIn(state: string): Promise<IssueView> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const view = (await operator("GET", "/api/v1/projects/demo/issues/7")) as IssueView;
    if (view.state === state) return view;
    if (Date.now() > deadline) throw new Error(`issue 7 is ${view.state}, not ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it("takes an issue through a Claude session to CI, and a red CI back through the same session", async () => {
  await operator("POST", "/api/v1/projects/demo/issues/7/events", {
    event: { type: "triage", blockers: [] },
  });
  const first = await issueIn("awaiting_ci");
  expect(first).toMatchObject({ branch: "conveyor/7", headSha: await upstream.sha("conveyor/7") });
  expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);

  const revisionStart = standIn.requests.length;
  await operator("POST", "/api/v1/projects/demo/issues/7/events", {
    event: {
      type: "ci",
      result: "red",
      headSha: first.headSha,
      excerpt: "FAIL test_greeting failed: want 'hello, world'",
    },
  });
  await issueIn("revising");
  const second = await issueIn("awaiting_ci");
  expect(second).toMatchObject({ sessionId: first.sessionId, headSha: await upstream.sha("conveyor/7") });
  expect(second.headSha).not.toBe(first.headSha);
  const revision = standIn.requests.slice(revisionStart);
  expect(revision.map((r) => r.headers["x-claude-code-session-id"])).toEqual(
    revision.map(() => first.sessionId),
  );

  const { token } = JSON.parse(
    await readFile(join(root, "work", ".conveyor-runner-identity.json"), "utf8"),
  ) as {
    token: string;
  };
  for (const line of runner.lines) {
    for (const secret of [registrationToken, token, GIT_TOKEN, API_KEY]) expect(line).not.toContain(secret);
  }
}, 60_000);

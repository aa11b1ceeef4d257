import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaudeDriver } from "../../../runner/drivers/claude.ts";
import { runJob } from "../../../runner/job.ts";
import type { Job, RunnerEvent } from "../../../src/runner-api/contract.ts";
import { bash, edit, text, toScriptRequest, write } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { tempDir, Upstream } from "../git/support.ts";
import { jobContext, makeJob, type TestContext, testSandbox } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";
import { running } from "./support/processes.ts";

const API_KEY = "sk-ant-test-0123456789abcdef";
const SET_PHASE = 'printf "PHASE:awaiting_ci\\n" > "$CONVEYOR_PHASE_FILE"';
// Secrets of the runner process that no session may see.
const RUNNER_SECRETS = {
  CONVEYOR_RUNNER_TOKEN: "rt-runner-secret-4242",
  CONVEYOR_GIT_TOKEN: "git-secret-4242",
  CONVEYOR_LEAK_MARKER: "leak-marker-4242",
};

let root = "";
let upstream: Upstream;
let worker: FakeWorker;
let standIn: ModelStandIn;
let ctx: TestContext;

beforeAll(async () => {
  root = await tempDir("runner-claude");
  upstream = await Upstream.create(root);
  worker = await FakeWorker.start();
  standIn = await startModelStandIn({
    script: [
      // First, so that it wins over the revise rule: the recovery prompt repeats the instructions.
      {
        when: /cannot be resumed/,
        steps: [
          bash(`sed -i s/hello/Hello/ greeting.txt && git commit -qam "Capitalize" && ${SET_PHASE}`),
          text("Recovered."),
        ],
      },
      {
        when: /Implement issue #7 /,
        steps: [
          write("greeting.txt", "hello\n"),
          bash(`git add greeting.txt && git commit -qm "Add greeting" && ${SET_PHASE}`),
          text("Done."),
        ],
      },
      {
        when: /Say hello, world/,
        steps: [
          edit("greeting.txt", "hello", "hello, world"),
          bash(`git commit -qam "Greet the world" && ${SET_PHASE}`),
          text("Revised."),
        ],
      },
      {
        when: /Implement issue #8 /,
        steps: [bash(`env > "$HOME/env.txt" && ${SET_PHASE}`), text("Dumped.")],
      },
      { when: /Implement issue #9 /, steps: Array.from({ length: 5 }, (_, i) => bash(`echo ${i}`)) },
      { when: /Implement issue #10 /, steps: [bash("sleep 20 && touch ../too-late"), text("Slept.")] },
    ],
  });
  Object.assign(process.env, RUNNER_SECRETS);
  ctx = jobContext({
    workDir: join(root, "work"),
    workerUrl: worker.url,
    token: worker.issueToken(),
    driver: () => new ClaudeDriver({ sandbox: testSandbox({ baseUrl: standIn.url, apiKey: API_KEY }) }),
  });
});

afterAll(async () => {
  for (const name of Object.keys(RUNNER_SECRETS)) delete process.env[name];
  expect(worker.violations).toEqual([]);
  await Promise.all([worker.close(), standIn.close()]);
  await rm(root, { recursive: true, force: true });
});

async function claim(job: Partial<Job> & { id: string }) {
  worker.enqueue(makeJob({ cloneUrl: `file://${upstream.path}`, ...job }));
  const claimed = await ctx.api.claim({ waitMs: 0, holding: [] });
  if (!claimed) throw new Error("nothing to claim");
  return claimed;
}

async function run(job: Partial<Job> & { id: string }) {
  const claimed = await claim(job);
  const firstRequest = standIn.requests.length;
  await runJob(ctx, claimed, new AbortController().signal);
  const outcome = worker.outcome(job.id);
  if (outcome?.kind !== "complete")
    throw new Error(`job ${job.id} did not complete: ${JSON.stringify(outcome)}`);
  const events = worker.events.get(job.id) ?? [];
  const only = <K extends RunnerEvent["kind"]>(kind: K) =>
    events.filter((e): e is Extract<RunnerEvent, { kind: K }> => e.kind === kind);
  return { outcome: outcome.body, requests: standIn.requests.slice(firstRequest), only };
}

const greeting = () =>
  readFile(
    join(ctx.workspace.worktreePath({ repoKey: "acme/widgets", issueNumber: 7 }), "greeting.txt"),
    "utf8",
  );

describe("the claude driver on the real Agent SDK", { timeout: 30_000 }, () => {
  let sessionId = "";
  let firstUsd = 0;

  it("runs a session that edits the worktree, commits, writes the phase and gets pushed", async () => {
    const { outcome, only } = await run({ id: "implement-7" });

    expect(outcome).toMatchObject({
      phase: "awaiting_ci",
      branch: "conveyor/7",
      headSha: await upstream.sha("conveyor/7"),
    });
    expect(await greeting()).toBe("hello\n");
    // The agent's closing words go with the completion: the pull request's description quotes them.
    expect(outcome.summary).toBe("Done.");
    sessionId = outcome.sessionId ?? "";
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(only("session")).toEqual([
      { kind: "session", sessionId, worktree: expect.stringContaining("worktrees/acme__widgets/7") },
    ]);
    const usage = only("usage").at(-1);
    expect(usage?.usage).toMatchObject({ turns: 3, cacheWriteTokens: expect.any(Number) });
    expect(usage?.usage.usd).toBeGreaterThan(0);
    expect(usage?.usage.cacheReadTokens).toBeGreaterThan(0);
    firstUsd = usage?.usage.usd ?? 0;
    // What the session did, as it went, for the issue's page.
    const steps = only("activity").flatMap((event) => event.items.map((item) => `${item.kind} ${item.text}`));
    expect(steps).toEqual([
      expect.stringMatching(/^tool Write .*greeting\.txt$/),
      expect.stringMatching(/^result /),
      'tool Bash git add greeting.txt && git commit -qm "Add greeting" && printf "PHASE:awaiting_ci\\n" > "$CONVEYOR_PHASE_FILE"',
      expect.stringMatching(/^result /),
      "text Done.",
    ]);
  });

  it("resumes the same session for a revision, and reports only the revision's usage", async () => {
    const { outcome, requests, only } = await run({
      id: "revise-7",
      kind: "revise",
      iteration: 2,
      sessionId,
      instructions: "Review: Say hello, world instead.",
    });

    expect(outcome).toMatchObject({
      phase: "awaiting_ci",
      sessionId,
      headSha: await upstream.sha("conveyor/7"),
    });
    expect(await greeting()).toBe("hello, world\n");
    expect(requests.map((r) => r.headers["x-claude-code-session-id"])).toEqual(requests.map(() => sessionId));
    // The whole earlier transcript rides along: that is what keeps the prompt cache warm.
    expect(JSON.stringify(requests[0]?.body)).toContain("Implement issue #7 ");
    const usage = only("usage").at(-1)?.usage;
    // The SDK's running total would include the first session's cost; the report must not.
    expect(usage?.usd).toBeGreaterThan(0);
    expect(usage?.usd).toBeLessThan(firstUsd);
    expect(usage?.cacheReadTokens).toBeGreaterThan(10 * (usage?.cacheWriteTokens ?? 0));
  });

  it("starts a fresh session from the branch when the transcript is gone", async () => {
    await rm(join(ctx.layout.agentHome("demo", 7), ".claude", "projects"), { recursive: true, force: true });
    const { outcome, requests } = await run({
      id: "revise-7b",
      kind: "revise",
      iteration: 3,
      sessionId,
      instructions: "CI: use a capital H.",
    });

    expect(outcome.phase).toBe("awaiting_ci");
    expect(await greeting()).toBe("Hello, world\n");
    expect(outcome.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(outcome.sessionId).not.toBe(sessionId);
    const prompt = toScriptRequest(requests[0]?.body ?? {}).lastUserText;
    expect(prompt).toContain("Please add greeting.txt saying hello."); // the issue
    expect(prompt).toContain("+hello, world"); // the pushed branch against main
    expect(prompt).toContain("PHASE:awaiting_ci; CI or the review then asked for changes"); // the last phase
    expect(prompt).toContain("CI: use a capital H."); // the instructions
    expect(prompt).toContain("untrusted");
  });

  it("gives the session a scrubbed environment: only what tools and the model need", async () => {
    await run({ id: "implement-8", issue: { number: 8, title: "Dump", body: "Dump the environment." } });

    const home = ctx.layout.agentHome("demo", 8);
    const dump = await readFile(join(home, "env.txt"), "utf8");
    const env = Object.fromEntries(
      dump
        .trim()
        .split("\n")
        .map((line) => line.split(/=(.*)/s).slice(0, 2)),
    );
    expect(env).toMatchObject({
      PATH: process.env.PATH,
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, ".claude"),
      CONVEYOR_PHASE_FILE: ctx.layout.phaseFile("demo", 8),
      // The sandbox's loopback port to the runner's model proxy, and a token worth nothing elsewhere.
      ANTHROPIC_BASE_URL: "http://127.0.0.1:41001",
      ANTHROPIC_API_KEY: expect.stringMatching(/^conveyor-session-[0-9a-f]{48}$/),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    });
    for (const secret of [...Object.values(RUNNER_SECRETS), API_KEY]) expect(dump).not.toContain(secret);
    // Everything else is what Claude Code itself sets for its tools (pinned SDK version).
    const ours =
      /^(PATH|HOME|CLAUDE_CONFIG_DIR|CONVEYOR_PHASE_FILE|ANTHROPIC_BASE_URL|ANTHROPIC_API_KEY|CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC|DISABLE_AUTOUPDATER)$/;
    const claudeCodes =
      /^(CLAUDE\w*|AI_AGENT|COREPACK_ENABLE_AUTO_PIN|SHELL|PWD|OLDPWD|SHLVL|_|GIT_EDITOR|NoDefaultCurrentDirectoryInExePath)$/;
    expect(Object.keys(env).filter((name) => !ours.test(name) && !claudeCodes.test(name))).toEqual([]);
  });

  it("stops at the job's turn budget and reports a dry exit with the reason", async () => {
    const { outcome, only } = await run({
      id: "implement-9",
      issue: { number: 9, title: "Loop", body: "Loop." },
      budget: { maxTurns: 2, usdRemaining: 10 },
    });

    expect(outcome).toMatchObject({
      phase: "dry_exit",
      reason: expect.stringContaining("maximum number of turns (2)"),
    });
    // The proxy counts the model calls it forwarded: one per turn.
    expect(only("usage").at(-1)?.usage.turns).toBe(2);
  });

  it("stops a running session when the Worker cancels the job", async () => {
    worker.leaseMs = 900;
    const claimed = await claim({
      id: "implement-10",
      issue: { number: 10, title: "Sleep", body: "Sleep." },
    });
    const job = runJob(ctx, claimed, new AbortController().signal);
    // The model's first answer is the `sleep 20` tool call; give Claude Code a moment to start it.
    await worker.waitFor(() =>
      standIn.requests.some((r) => JSON.stringify(r.body).includes("Implement issue #10 ")),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cancelled = Date.now();
    worker.cancel("implement-10");
    await job;

    expect(worker.outcome("implement-10")).toMatchObject({
      kind: "fail",
      body: { error: "cancelled", retryable: false },
    });
    expect(Date.now() - cancelled).toBeLessThan(5_000);
    // The tool's process goes with the session (Claude Code reaps it a moment after it exits).
    await worker.waitFor(() => !running("sleep 20 && touch"), 3_000);
  });
});

import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaudeDriver } from "../../../runner/drivers/claude.ts";
import { git } from "../../../runner/git/exec.ts";
import { runJob } from "../../../runner/job.ts";
import { sessionProcesses } from "../../../runner/leftovers.ts";
import { bash, text } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { tempDir, Upstream } from "../git/support.ts";
import { jobContext, makeJob, REPO, type TestContext, testSandbox } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";
import { until } from "./support/observe.ts";

// A fresh session's Claude Code starts in its sandbox while the worktree is fetched and checked out; the
// prompt, and with it the first model request, goes only once the worktree is ready (runner/job.ts).

const COMMIT =
  'git add . && git commit -qm "Add notes" && printf "PHASE:awaiting_ci\\n" > "$CONVEYOR_PHASE_FILE"';
const STARTED_EARLY = "claude code started; its prompt waits for its place";

let root = "";
let upstream: Upstream;
let worker: FakeWorker;
let standIn: ModelStandIn;
let ctx: TestContext;
/** The fetch of the next job waits for this, as a slow forge would keep it. */
let held: Promise<void> = Promise.resolve();

beforeAll(async () => {
  root = await tempDir("runner-early-start");
  upstream = await Upstream.create(root);
  // What Claude Code could read of a repository as it starts: it must tell the model the same either way.
  await upstream.commit(
    {
      "CLAUDE.md": "Run the tests before you commit.\n",
      ".claude/settings.json": '{ "env": { "FROM_THE_REPOSITORY": "1" } }\n',
      ".mcp.json": '{ "mcpServers": {} }\n',
    },
    "the project's agent settings",
  );
  worker = await FakeWorker.start();
  standIn = await startModelStandIn({
    script: [
      {
        when: /Implement issue #\d+ /,
        steps: [bash(`git status --short --branch > notes.txt && ${COMMIT}`), text("Done.")],
      },
    ],
  });
  ctx = jobContext({
    workDir: join(root, "work"),
    workerUrl: worker.url,
    token: worker.issueToken(),
    driver: () =>
      new ClaudeDriver({ sandbox: testSandbox({ baseUrl: standIn.url, apiKey: "sk-ant-test-early" }) }),
  });
  const ensureMirror = ctx.workspace.ensureMirror.bind(ctx.workspace);
  ctx.workspace.ensureMirror = async (ref) => {
    await held;
    return ensureMirror(ref);
  };
  // A runner that served the project before: its private repository is there.
  await ctx.workspace.ensureMirror({ repoKey: REPO, remoteUrl: `file://${upstream.path}` });
});

afterAll(async () => {
  expect(worker.violations).toEqual([]);
  await Promise.all([worker.close(), standIn.close()]);
  await rm(root, { recursive: true, force: true });
});

async function start(number: number) {
  const id = `implement-${number}`;
  worker.enqueue(
    makeJob({
      id,
      cloneUrl: `file://${upstream.path}`,
      issue: { number, title: "Take notes", body: "Write notes.txt." },
    }),
  );
  const claimed = await ctx.api.claim({ waitMs: 0, holding: [] });
  if (!claimed) throw new Error("nothing to claim");
  const firstRequest = standIn.requests.length;
  const done = runJob(ctx, claimed, new AbortController().signal);
  const requests = () => standIn.requests.slice(firstRequest);
  const lines = () => ctx.lines.filter((line) => line.job === id).map((line) => line.msg);
  return { id, done, requests, lines };
}

/**
 * What a session's first request tells the model besides its prompt (system prompt, tools, the environment
 * in its messages), with what differs between two issues named alike: their numbers, paths and branches.
 */
const contextOf = (request: { body: Record<string, unknown> | undefined } | undefined, number: number) => {
  const { system, tools, messages } = request?.body ?? {};
  return JSON.stringify({ system, tools, messages }).replace(new RegExp(`([#/])${number}\\b`, "g"), "$1<n>");
};

describe("a session started before its worktree is ready", { timeout: 60_000 }, () => {
  it("sends its prompt only once the worktree is ready, and works in it as in any other", async () => {
    let release = () => {};
    held = new Promise((resolve) => {
      release = resolve;
    });
    const job = await start(21);

    // Claude Code is up in its sandbox while the fetch is still held: nothing has gone to the model.
    await until(() => job.lines().includes(STARTED_EARLY));
    expect(job.lines()).not.toContain("worktree ready");
    expect(job.requests()).toEqual([]);

    release();
    await job.done;
    expect(worker.outcome(job.id)).toMatchObject({ kind: "complete", body: { phase: "awaiting_ci" } });
    const order = [
      "claude code started; its prompt waits for its place",
      "worktree ready",
      "session started",
    ];
    expect(job.lines().filter((msg) => order.includes(msg as string))).toEqual(order);
    const [first] = job.requests();
    expect(JSON.stringify(first?.body)).toContain("Implement issue #21 ");
    // The session worked in the checked-out branch: what it committed is on the pushed branch.
    const notes = await git(["-C", upstream.path, "show", "conveyor/21:notes.txt"]);
    expect(notes).toBe("## conveyor/21\n?? notes.txt\n");
  });

  it("tells the model what a session started on a ready worktree tells it", async () => {
    held = Promise.resolve();
    // Issue 22's worktree is there from an earlier job: its session starts once the fetch has decided.
    await ctx.workspace.ensureWorktree({ repoKey: REPO, issueNumber: 22, baseBranch: "main" });
    const ready = await start(22);
    await ready.done;
    expect(ready.lines()).not.toContain(STARTED_EARLY);

    const early = await start(23);
    await early.done;
    expect(early.lines()).toContain(STARTED_EARLY);
    expect(contextOf(early.requests()[0], 23)).toBe(contextOf(ready.requests()[0], 22));
    expect(contextOf(early.requests()[0], 23)).toContain("Is a git repository: true");
  });

  it("fails the job with the fetch's error, and sends nothing, when the worktree cannot be prepared", async () => {
    let fail = (_: Error) => {};
    held = new Promise((_, reject) => {
      fail = reject;
    });
    const job = await start(24);
    await until(() => job.lines().includes(STARTED_EARLY));
    fail(new Error("the forge is down"));
    await job.done;
    expect(worker.outcome(job.id)).toMatchObject({
      kind: "fail",
      body: { error: "the forge is down", retryable: true },
    });
    expect(job.requests()).toEqual([]);
    // Its Claude Code is gone with it: nothing of it writes on in the agent's home for the next attempt.
    expect(sessionProcesses(ctx.layout.agentsDir)).toEqual([]);
  });
});

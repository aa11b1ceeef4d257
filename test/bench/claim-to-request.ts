/**
 * From a claim to the session's first model request through the runner's job pipeline (`runJob` with the
 * Claude driver: the real Agent SDK binary in bubblewrap, the Messages-API stand-in), its repository served
 * over smart HTTP as a forge serves it: with Claude Code started beside the worktree's fetch and checkout
 * (runner/job.ts), against the same driver made to wait for the worktree first. The two alternate trial by
 * trial, so that a load that comes and goes weighs on both alike.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { ClaudeDriver } from "../../runner/drivers/claude.ts";
import type { Driver } from "../../runner/drivers/driver.ts";
import { runJob } from "../../runner/job.ts";
import { startGitHttpServer, tempDir } from "../node/git/support.ts";
import { jobContext, makeJob, REPO, testSandbox } from "../node/runner/support/context.ts";
import { FakeWorker } from "../node/runner/support/fake-worker.ts";
import { bash, text } from "../support/model/script.ts";
import { startModelStandIn } from "../support/model/server.ts";
import { projectRepository } from "./job-start.ts";
import { emit, percentile } from "./load.ts";

const GIT_USER = "bench";
const GIT_TOKEN = "bench-git-token";
const FILES = 2_000;

export async function benchClaimToRequest({ trials = 7 } = {}): Promise<void> {
  const root = await tempDir("bench-claim-request");
  const server = await startGitHttpServer(root, GIT_USER, GIT_TOKEN);
  const worker = await FakeWorker.start();
  let firstRequestAt = 0;
  const standIn = await startModelStandIn({
    script: [
      {
        when: /Implement issue #\d+ /,
        steps: [
          () => {
            firstRequestAt ||= performance.now();
            return bash(`printf 'PHASE:escalate\\nbench\\n' > "$CONVEYOR_PHASE_FILE"`);
          },
          text("Escalated."),
        ],
      },
    ],
  });
  try {
    const cloneUrl = await projectRepository(root, server, FILES);
    const claude = new ClaudeDriver({
      sandbox: testSandbox({ baseUrl: standIn.url, apiKey: "sk-ant-bench-claim-request" }),
    });
    // The same driver without `startsEarly`: its session starts once the worktree is ready.
    const waiting: Driver = { run: (input) => claude.run(input) };
    const ctx = jobContext({
      workDir: join(root, "work"),
      workerUrl: worker.url,
      token: worker.issueToken(),
      credential: { username: GIT_USER, token: GIT_TOKEN },
      driver: () => claude,
    });
    const shutdown = new AbortController().signal;
    let number = 0;
    const start = async (driver: Driver): Promise<number> => {
      number++;
      worker.enqueue(makeJob({ id: `job-${number}`, cloneUrl, issue: { number, title: "Bench", body: "" } }));
      const claim = await ctx.api.claim({ waitMs: 1_000, holding: [] });
      if (!claim) throw new Error("no job to claim");
      firstRequestAt = 0;
      const claimedAt = performance.now();
      await runJob({ ...ctx, driver }, claim, shutdown);
      if (firstRequestAt === 0) throw new Error(`job ${number}: no model request`);
      await ctx.workspace.reap({ repoKey: REPO, issueNumber: number });
      return firstRequestAt - claimedAt;
    };

    // The first job makes the private repository and the first sandbox: every measured job finds them warm.
    await start(waiting);
    const early: number[] = [];
    const sequential: number[] = [];
    for (let i = 0; i < trials; i++) {
      early.push(await start(claude));
      sequential.push(await start(waiting));
    }
    const baseline = percentile(sequential, 50);
    emit({ name: "claim_to_first_request_p50", value: percentile(early, 50), unit: "ms", baseline });
    // Pair by pair, which the load of the moment moves less than either figure.
    const saved = early.map((ms, i) => (sequential[i] ?? ms) - ms);
    emit({ name: "claim_to_first_request_saved_p50", value: percentile(saved, 50), unit: "ms" });
  } finally {
    await Promise.all([worker.close(), server.close(), standIn.close()]);
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchClaimToRequest();

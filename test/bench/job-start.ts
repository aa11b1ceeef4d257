/**
 * Jobs out: how long the runner's job pipeline takes from a claim to the agent starting in a repository of
 * 10 000 files, against cloning that repository.
 */
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { runJob } from "../../runner/job.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../node/git/support.ts";
import { jobContext, makeJob } from "../node/runner/support/context.ts";
import { FakeWorker } from "../node/runner/support/fake-worker.ts";
import { emit, percentile } from "./load.ts";

const FILES = 10_000;
const GIT_USER = "bench";
const GIT_TOKEN = "bench-git-token";

/** A repository of `files` small source files on `main`, served by `server`; its clone URL. */
export async function projectRepository(root: string, server: GitHttpServer, files: number): Promise<string> {
  const upstream = await Upstream.create(root);
  const content = Object.fromEntries(
    Array.from({ length: files }, (_, i) => [`src/m${i % 100}/f${i}.ts`, `export const v${i} = ${i};\n`]),
  );
  await upstream.commit(content, `${files} files`);
  return server.url("upstream.git");
}

/**
 * From a claim to the driver's `run()` through the runner's job pipeline (`runJob`: warm mirror fetched, the
 * issue's worktree, phase file), with a mirror of a 10 000-file repository served over smart HTTP: for a
 * continuation (the worktree kept from the last iteration) and a first iteration (a worktree added); against
 * `git clone` of the same repository from the same server.
 */
export async function benchJobStart({ continuations = 30, firsts = 3, clones = 3 } = {}): Promise<void> {
  const root = await tempDir("bench-job-start");
  const server = await startGitHttpServer(root, GIT_USER, GIT_TOKEN);
  const worker = await FakeWorker.start();
  try {
    const cloneUrl = await projectRepository(root, server, FILES);

    let runAt = 0;
    const ctx = jobContext({
      workDir: join(root, "work"),
      workerUrl: worker.url,
      token: worker.issueToken(),
      credential: { username: GIT_USER, token: GIT_TOKEN },
      // The agent "starts" and ends at once: a dry exit, reported and done.
      driver: () => ({
        run: async () => {
          runAt = performance.now();
          return { sessionId: null };
        },
      }),
    });
    const shutdown = new AbortController().signal;
    let jobs = 0;
    /** Claims and runs a job; the time from the claim to the driver's start, checked to be the path meant. */
    const start = async (
      job: Omit<Parameters<typeof makeJob>[0], "id" | "cloneUrl">,
      from: "existing" | "base",
    ) => {
      worker.enqueue(makeJob({ ...job, id: `job-${++jobs}`, cloneUrl }));
      const claim = await ctx.api.claim({ waitMs: 1_000, holding: [] });
      if (!claim) throw new Error("no job to claim");
      const claimedAt = performance.now();
      await runJob(ctx, claim, shutdown);
      const ready = ctx.lines.findLast((line) => line.msg === "worktree ready");
      if (ready?.job !== claim.job.id || ready.from !== from)
        throw new Error(`not from ${from}: ${ready?.from}`);
      return runAt - claimedAt;
    };
    const issue = (number: number) => ({ number, title: "Bench", body: "" });

    // The first job creates the mirror: every measured job finds it warm, as a runner does after its first.
    await start({ issue: issue(1) }, "base");
    const continuation: number[] = [];
    for (let i = 0; i < continuations; i++) {
      const revise = { kind: "revise", issue: issue(1), sessionId: "s", instructions: "fix" } as const;
      continuation.push(await start(revise, "existing"));
    }
    const first: number[] = [];
    for (let i = 0; i < firsts; i++) {
      first.push(await start({ issue: issue(100 + i) }, "base"));
      await ctx.workspace.reap({ repoKey: "acme/widgets", issueNumber: 100 + i });
    }
    const clone: number[] = [];
    const authenticated = cloneUrl.replace("http://", `http://${GIT_USER}:${GIT_TOKEN}@`);
    for (let i = 0; i < clones; i++) {
      const dir = join(root, `clone-${i}`);
      const t = performance.now();
      await promisify(execFile)("git", ["clone", "--quiet", authenticated, dir]);
      clone.push(performance.now() - t);
      await rm(dir, { recursive: true, force: true });
    }

    const baseline = percentile(clone, 50);
    emit({
      name: "job_start_continuation_p50",
      value: percentile(continuation, 50),
      unit: "ms",
      target: "<= baseline / 10",
      baseline,
    });
    emit({ name: "job_start_first_iteration_p50", value: percentile(first, 50), unit: "ms", baseline });
  } finally {
    await Promise.all([worker.close(), server.close()]);
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * Red CI the infrastructure caused is re-run through the CI's API before a fix session is spent: real
 * webhooks, the local forge's commit statuses, the Woodpecker API stand-in's restart (test/support/woodpecker.ts).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { page, sessionCookie } from "./dashboard-support.ts";
import {
  awaitingCi,
  checkHook,
  checkRun,
  githubProject,
  postStatus,
  STATUS_DELIVERY,
  statusPayload,
  woodpeckerLoop,
} from "./support/ci.ts";
import { jobsOf } from "./support/jobs.ts";
import { control, type Loop, services } from "./support/review.ts";
import { deliver } from "./support/webhooks.ts";

const CONTEXT = "ci/woodpecker/pr/test";

type Pipeline = { number: number; parent?: number };
const pipelines = async () =>
  (await (
    await fetch(`${services.woodpeckerUrl}/api/repos/7/pipelines`, {
      headers: { authorization: "Bearer wp-token" },
    })
  ).json()) as Pipeline[];

/** A pipeline the CI cancelled, on `commit`: its number. */
const killedPipeline = async (commit: string) => {
  const res = await fetch(`${services.woodpeckerUrl}/test/pipelines`, {
    method: "POST",
    body: JSON.stringify({ commit, status: "killed" }),
  });
  return ((await res.json()) as Pipeline).number;
};

/** Woodpecker's status for a pipeline it cancelled (server/forge/common/status.go), and its webhook. */
async function cancelled(loop: Loop, sha: string, pipeline: number) {
  const status = {
    description: "Pipeline was canceled",
    target_url: `${services.woodpeckerUrl}/repos/7/pipeline/${pipeline}`,
  };
  await postStatus(loop, sha, { context: CONTEXT, state: "failure", ...status });
  const payload = statusPayload(loop, sha, CONTEXT, "failure", { id: pipeline, ...status });
  const res = await deliver(loop.project, STATUS_DELIVERY, payload);
  expect(await res.json()).toEqual({ accepted: true, events: 1 });
}

/** Issue 1 of a Woodpecker project, waiting for CI on its pushed branch. */
async function waitingOnWoodpecker(name: string) {
  const loop = await woodpeckerLoop(name);
  const push = { repo: loop.repo, branch: "conveyor/1", files: { "a.txt": "a" } };
  const { sha } = await control<{ sha: string }>("push", push);
  return { loop, sha, issue: await awaitingCi(loop.project, 1, sha, loop.repo) };
}

describe("CI re-runs", () => {
  it("a cancelled pipeline is restarted once with no fix session spent; the re-run's red starts one", async () => {
    const { loop, sha, issue } = await waitingOnWoodpecker("ci-rerun");

    const first = await killedPipeline(sha);
    await cancelled(loop, sha, first);
    await issue.drain();
    const restart = (await pipelines()).find((p) => p.parent === first);
    expect(restart).toBeDefined();
    const view = await issue.view();
    expect(view).toMatchObject({ state: "awaiting_ci", ciFixes: 0 });
    const rerun = view?.history.at(-1);
    expect(rerun).toMatchObject({ event: "ci", from: "awaiting_ci", to: "awaiting_ci", outcome: "applied" });
    expect(rerun?.reason).toBe(`CI re-run 1 of 1, no fix session spent: ${CONTEXT} cancelled`);
    expect(rerun?.ci?.checks).toEqual([expect.objectContaining({ name: CONTEXT, cause: "cancelled" })]);
    expect((await jobsOf(loop.project)).map((job) => job.kind)).not.toContain("revise");
    // The issue page's CI table shows the re-run and why.
    const cookie = await sessionCookie();
    const html = await (await page(`/dashboard/projects/${loop.project}/issues/1`, cookie)).text();
    expect(html).toContain("CI re-run 1 of 1, no fix session spent");
    expect(html).toContain('<em class="cause"> (cancelled)</em>');

    // The restarted pipeline is cancelled too: the one re-run is spent, so this red goes to a fix session.
    const number = restart?.number ?? 0;
    await cancelled(loop, sha, number);
    await issue.drain();
    expect((await pipelines()).filter((p) => p.parent === number)).toEqual([]);
    expect(await issue.view()).toMatchObject({ state: "revising", ciFixes: 1 });
    expect((await jobsOf(loop.project)).filter((job) => job.kind === "revise")).toHaveLength(1);
    const settled = await env.DB.prepare(
      "SELECT check_name, cause, result FROM ci_reruns WHERE project_id = ? ORDER BY round",
    )
      .bind(loop.project)
      .all();
    expect(settled.results).toEqual([{ check_name: CONTEXT, cause: "cancelled", result: "failed" }]);
  });

  it("a status linking a pipeline of another commit restarts nothing: the red result goes to a fix session", async () => {
    const { loop, sha, issue } = await waitingOnWoodpecker("ci-rerun-refused");
    const elsewhere = await killedPipeline("f".repeat(40));
    await cancelled(loop, sha, elsewhere);
    // The re-run's refusal is an event of its own, whose revise job the next drain enqueues.
    await issue.drain();
    await issue.drain();
    const view = await issue.view();
    expect(view).toMatchObject({ state: "revising", ciFixes: 1 });
    expect(view?.history.filter((h) => h.event === "ci").map((h) => [h.to, h.reason])).toEqual([
      ["awaiting_ci", `CI re-run 1 of 1, no fix session spent: ${CONTEXT} cancelled`],
      [
        "revising",
        `the CI refused the re-run: Woodpecker pipeline ${elsewhere} ran on ffffffffffff, not the head`,
      ],
    ]);
    expect((await jobsOf(loop.project)).filter((job) => job.kind === "revise")).toHaveLength(1);
    expect((await pipelines()).filter((p) => p.parent === elsewhere)).toEqual([]);
  });

  it("GitHub Actions: a timed-out job's failed jobs are re-run; green on the re-run, it is a check that flipped", async () => {
    const gh = await githubProject("gh-rerun");
    const { sha } = await control<{ sha: string }>("push", {
      repo: gh.repo,
      branch: "conveyor/1",
      files: { "a.txt": "a" },
    });
    const issue = await awaitingCi(gh.project, 1, sha, gh.repo);
    const lint = await checkRun(gh.repo, gh.githubActions, sha, { name: "lint", status: "in_progress" });
    await checkRun(gh.repo, gh.githubActions, sha, { name: "test", conclusion: "timed_out" });
    // Red, but GitHub re-runs only a finished run: nothing until the workflow run ends.
    await checkHook(gh, "check_run", "github/check_run.completed.failure.json", sha);
    await issue.drain();
    expect((await issue.view())?.history.filter((h) => h.event === "ci")).toEqual([]);
    await checkRun(gh.repo, gh.githubActions, sha, { name: "lint", conclusion: "success" }, lint);
    await checkHook(gh, "check_suite", "github/check_suite.completed.json", sha);
    await issue.drain();

    expect(await issue.view()).toMatchObject({ state: "awaiting_ci", ciFixes: 0 });
    const runs = async () => {
      const res = await fetch(
        `${services.forgeApiUrl}/repos/${gh.repo}/commits/${sha}/check-runs?filter=all`,
        {
          headers: { authorization: `token ${services.conveyorToken}` },
        },
      );
      return ((await res.json()) as { check_runs: { id: number; name: string; status: string }[] })
        .check_runs;
    };
    // Only the failed job runs again, as a new attempt's job.
    const again = (await runs()).filter((run) => run.status === "queued");
    expect(again.map((run) => run.name)).toEqual(["test"]);
    expect((await jobsOf(gh.project)).map((job) => job.kind)).not.toContain("revise");

    await checkRun(gh.repo, gh.githubActions, sha, { name: "test", conclusion: "success" }, again[0]?.id);
    await checkHook(gh, "check_run", "github/check_run.completed.success.json", sha);
    await issue.drain();
    const view = await issue.view();
    expect(view?.history.filter((h) => h.event === "ci").map((h) => h.to)).toEqual([
      "awaiting_ci",
      "awaiting_review",
    ]);
    const flipped = await env.DB.prepare(
      "SELECT check_name, cause, result FROM ci_reruns WHERE project_id = ?",
    )
      .bind(gh.project)
      .all();
    // The job and its suite (the workflow run) both timed out, and both passed on the re-run.
    expect(flipped.results).toEqual([
      { check_name: "test", cause: "timed_out", result: "passed" },
      { check_name: "github-actions", cause: "timed_out", result: "passed" },
    ]);
  });
});

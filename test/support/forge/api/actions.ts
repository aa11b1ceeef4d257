import { latestRuns, suiteState } from "../checks.ts";
import { ApiError, json, notFound, type Reply } from "../http.ts";
import type { CheckRun, CheckSuite } from "../state.ts";
import { intParam, type RepoContext, requireMode } from "./context.ts";

// GitHub Actions' workflow runs (REST "Workflow runs"), in GitHub's wire format, for GitHub projects pointed at
// the local forge: the check suites of the app `github-actions` are its workflow runs, one run per suite, the
// run's id the suite's. Re-running a run's failed jobs queues each of its failed or cancelled jobs again (a new
// check run of the same name in the suite, as a new attempt's job shows), which a test then completes as the
// workflow would.

export const ACTIONS_APP = "github-actions";

/** Conclusions whose jobs a re-run of failed jobs leaves alone. */
const PASSED = new Set<CheckRun["conclusion"]>(["success", "neutral", "skipped"]);

function workflowRuns(ctx: RepoContext): CheckSuite[] {
  const app = ctx.forge.store.state.users.find((user) => user.login === ACTIONS_APP);
  return app ? ctx.repo.checkSuites.filter((suite) => suite.appUserId === app.id) : [];
}

/** `GET /actions/runs`, filtered by `check_suite_id` or `head_sha` when given. */
export async function listWorkflowRuns(ctx: RepoContext): Promise<Reply> {
  const suiteId = ctx.query.get("check_suite_id");
  const sha = ctx.query.get("head_sha");
  const runs = workflowRuns(ctx)
    .filter((suite) => suiteId === null || suite.id === Number(suiteId))
    .filter((suite) => sha === null || suite.sha === sha)
    .sort((a, b) => b.id - a.id);
  return json(200, { total_count: runs.length, workflow_runs: runs.map((suite) => renderRun(ctx, suite)) });
}

/**
 * `POST /actions/runs/{run_id}/rerun-failed-jobs`: 201 with no body; 403 while the run still runs (GitHub's
 * "This workflow is already running"); 404 for no such run.
 */
export async function rerunFailedJobs(ctx: RepoContext): Promise<Reply> {
  requireMode(ctx, "write");
  const suite = workflowRuns(ctx).find((s) => s.id === intParam(ctx, "run_id"));
  if (!suite) throw notFound();
  if (suiteState(ctx.repo, suite).status !== "completed")
    throw new ApiError(403, "This workflow is already running");
  const { store } = ctx.forge;
  const failed = latestRuns(ctx.repo.checkRuns.filter((run) => run.suiteId === suite.id)).filter(
    (run) => !PASSED.has(run.conclusion),
  );
  for (const job of failed) {
    ctx.repo.checkRuns.push({
      ...job,
      id: store.nextId(),
      status: "queued",
      conclusion: null,
      title: null,
      summary: null,
      startedAt: store.now(),
      completedAt: null,
    });
  }
  return { status: 201 };
}

function renderRun(ctx: RepoContext, suite: CheckSuite) {
  const { status, conclusion } = suiteState(ctx.repo, suite);
  return {
    id: suite.id,
    name: "CI",
    check_suite_id: suite.id,
    head_sha: suite.sha,
    event: "pull_request",
    status,
    conclusion,
    url: `${ctx.forge.render.repoApiUrl(ctx.repo)}/actions/runs/${suite.id}`,
    created_at: suite.createdAt,
  };
}

import { z } from "zod";
import { latestRuns, suiteFor, suiteState } from "../checks.ts";
import { gitDir } from "../forge.ts";
import { resolveCommit } from "../git/refs.ts";
import { ApiError, json, notFound, parseBody, type Reply } from "../http.ts";
import { type CheckRun, type CheckSuite, checkConclusion, checkStatus, type Repo } from "../state.ts";
import { intParam, type RepoContext, requireMode } from "./context.ts";

// GitHub's checks API (REST "Check runs" and "Check suites"), in GitHub's wire format: Forgejo has no such
// thing, so these paths answer as GitHub does for GitHub projects pointed at the local forge.

const output = z.object({ title: z.string().nullish(), summary: z.string().nullish() });

const createRun = z.object({
  name: z.string().min(1),
  head_sha: z.string().regex(/^[0-9a-f]{40}$/),
  status: checkStatus.optional(),
  conclusion: checkConclusion.optional(),
  details_url: z.string().optional(),
  output: output.optional(),
});

const updateRun = createRun.omit({ head_sha: true }).partial();

async function commit(ctx: RepoContext, ref: string): Promise<string> {
  const sha = await resolveCommit(gitDir(ctx.forge.reposDir, ctx.repo), ref);
  if (!sha) throw new ApiError(422, `No commit found for SHA: ${ref}`);
  return sha;
}

/** `conclusion` completes a run, as on GitHub; `completed` needs one. */
function settle(
  run: CheckRun,
  status: CheckRun["status"] | undefined,
  conclusion: CheckRun["conclusion"] | undefined,
  now: string,
) {
  const next = conclusion ? "completed" : (status ?? run.status);
  if (next === "completed" && !(conclusion ?? run.conclusion))
    throw new ApiError(422, "conclusion is required when status is completed");
  run.status = next;
  if (conclusion) run.conclusion = conclusion;
  if (next === "completed" && run.completedAt === null) run.completedAt = now;
}

/** Writers post runs; the doer is the app, and its suite on the commit is created with the first run. */
export async function createCheckRun(ctx: RepoContext): Promise<Reply> {
  requireMode(ctx, "write");
  const input = parseBody(createRun, ctx.body);
  const sha = await commit(ctx, input.head_sha);
  const { store } = ctx.forge;
  const { suite } = suiteFor(store, ctx.repo, sha, ctx.doer);
  const run: CheckRun = {
    id: store.nextId(),
    suiteId: suite.id,
    sha,
    name: input.name,
    status: "queued",
    conclusion: null,
    detailsUrl: input.details_url ?? null,
    title: input.output?.title ?? null,
    summary: input.output?.summary ?? null,
    startedAt: store.now(),
    completedAt: null,
  };
  settle(run, input.status, input.conclusion, store.now());
  ctx.repo.checkRuns.push(run);
  return json(201, renderRun(ctx, run));
}

export async function updateCheckRun(ctx: RepoContext): Promise<Reply> {
  requireMode(ctx, "write");
  const input = parseBody(updateRun, ctx.body);
  const run = ctx.repo.checkRuns.find((r) => r.id === intParam(ctx, "id"));
  if (!run) throw notFound();
  settle(run, input.status, input.conclusion, ctx.forge.store.now());
  if (input.name) run.name = input.name;
  if (input.details_url !== undefined) run.detailsUrl = input.details_url;
  if (input.output) {
    run.title = input.output.title ?? run.title;
    run.summary = input.output.summary ?? run.summary;
  }
  return json(200, renderRun(ctx, run));
}

/** An app's suite with no runs yet (queued), as a CI app announces work before it starts. */
export async function createCheckSuite(ctx: RepoContext): Promise<Reply> {
  requireMode(ctx, "write");
  const input = parseBody(z.object({ head_sha: z.string().regex(/^[0-9a-f]{40}$/) }), ctx.body);
  const sha = await commit(ctx, input.head_sha);
  const { suite, created } = suiteFor(ctx.forge.store, ctx.repo, sha, ctx.doer);
  return json(created ? 201 : 200, renderSuite(ctx, suite));
}

export async function listCheckRuns(ctx: RepoContext): Promise<Reply> {
  const sha = await commit(ctx, ctx.params.ref ?? "");
  const all = ctx.repo.checkRuns.filter((run) => run.sha === sha);
  const runs = ctx.query.get("filter") === "all" ? [...all].sort((a, b) => b.id - a.id) : latestRuns(all);
  return json(200, { total_count: runs.length, check_runs: runs.map((run) => renderRun(ctx, run)) });
}

export async function listCheckSuites(ctx: RepoContext): Promise<Reply> {
  const sha = await commit(ctx, ctx.params.ref ?? "");
  const suites = ctx.repo.checkSuites.filter((suite) => suite.sha === sha);
  return json(200, {
    total_count: suites.length,
    check_suites: suites.map((suite) => renderSuite(ctx, suite)),
  });
}

function app(ctx: RepoContext, userId: number) {
  const user = ctx.forge.store.user(userId);
  return { id: user.id, slug: user.login, name: user.fullName || user.login, owner: { login: user.login } };
}

function renderRun(ctx: RepoContext, run: CheckRun) {
  const base = ctx.forge.render.repoApiUrl(ctx.repo);
  const suite = ctx.repo.checkSuites.find((s) => s.id === run.suiteId);
  return {
    id: run.id,
    head_sha: run.sha,
    external_id: "",
    url: `${base}/check-runs/${run.id}`,
    html_url: `${ctx.forge.render.repoUrl(ctx.repo)}/runs/${run.id}`,
    details_url: run.detailsUrl,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: { title: run.title, summary: run.summary, text: null, annotations_count: 0 },
    name: run.name,
    check_suite: { id: run.suiteId },
    app: app(ctx, suite?.appUserId ?? ctx.doer.id),
    pull_requests: [],
  };
}

function renderSuite(ctx: RepoContext, suite: CheckSuite) {
  const base = ctx.forge.render.repoApiUrl(ctx.repo);
  const runs = latestRuns(ctx.repo.checkRuns.filter((run) => run.suiteId === suite.id));
  return {
    id: suite.id,
    head_branch: headBranch(ctx.repo, suite.sha),
    head_sha: suite.sha,
    ...suiteState(ctx.repo, suite),
    url: `${base}/check-suites/${suite.id}`,
    app: app(ctx, suite.appUserId),
    pull_requests: [],
    created_at: suite.createdAt,
    updated_at: suite.createdAt,
    latest_check_runs_count: runs.length,
    check_runs_url: `${base}/check-suites/${suite.id}/check-runs`,
  };
}

const headBranch = (repo: Repo, sha: string) =>
  Object.entries(repo.branches).find(([, head]) => head === sha)?.[0] ?? null;

import { z } from "zod";
import { gitDir } from "../forge.ts";
import { resolveCommit } from "../git/refs.ts";
import { json, notFound, parseBody, type Reply } from "../http.ts";
import { type CommitStatus, statusState } from "../state.ts";
import { addStatus, combinedState, latestStatuses } from "../statuses.ts";
import { type RepoContext, requireMode } from "./context.ts";
import { paginate } from "./pagination.ts";

const createStatusOption = z.object({
  state: statusState,
  target_url: z.string().optional(),
  description: z.string().optional(),
  context: z.string().optional(),
});

async function commitParam(ctx: RepoContext, name: string): Promise<string | null> {
  return resolveCommit(gitDir(ctx.forge.reposDir, ctx.repo), ctx.params[name] ?? "");
}

/** Writers only; the sha may be abbreviated (it is stored in full). Statuses send no webhook (Forgejo). */
export async function createCommitStatus(ctx: RepoContext): Promise<Reply> {
  requireMode(ctx, "write");
  const input = parseBody(createStatusOption, ctx.body);
  const sha = await commitParam(ctx, "sha");
  if (!sha) throw notFound(`commit does not exist [sha: ${ctx.params.sha}]`);
  const { state, context = "", target_url: targetUrl = "", description = "" } = input;
  const status = addStatus(
    ctx.forge.store,
    ctx.repo,
    sha,
    { state, context, targetUrl, description },
    ctx.doer,
  );
  return json(201, ctx.forge.render.status(ctx.repo, status));
}

/** Every status of a commit, newest first, paginated. */
export async function listCommitStatuses(ctx: RepoContext): Promise<Reply> {
  const sha = (await commitParam(ctx, "sha")) ?? ctx.params.sha;
  const statuses = ctx.repo.statuses.filter((status) => status.sha === sha).sort((a, b) => b.id - a.id);
  const page = paginate(ctx, statuses);
  return json(
    200,
    page.items.map((status) => ctx.forge.render.status(ctx.repo, status)),
    page.headers,
  );
}

/**
 * The latest status per context on a branch, tag or sha, and the worst of their states. No status yet (or a
 * ref that names nothing): Gitea's empty CombinedStatus, `state: ""` and `statuses: null`.
 */
export async function combinedStatus(ctx: RepoContext): Promise<Reply> {
  const { forge, repo } = ctx;
  const sha = await commitParam(ctx, "ref");
  const latest = sha ? latestStatuses(repo, sha) : [];
  if (ctx.dialect === "github") return githubCombinedStatus(ctx, sha ?? ctx.params.ref ?? "", latest);
  if (!sha || latest.length === 0) {
    const empty = {
      state: "",
      sha: "",
      total_count: 0,
      statuses: null,
      repository: null,
      commit_url: "",
      url: "",
    };
    return json(200, empty);
  }
  const page = paginate(ctx, latest);
  const commitUrl = `${forge.render.repoApiUrl(repo)}/commits/${sha}`;
  return json(
    200,
    {
      state: combinedState(page.items),
      sha,
      total_count: latest.length,
      statuses: page.items.map((status) => forge.render.status(repo, status)),
      repository: forge.render.repo(repo, ctx.mode),
      commit_url: commitUrl,
      url: `${commitUrl}/status`,
    },
    { "X-Total-Count": String(latest.length) },
  );
}

/** GitHub's combined status: `state` per entry, `pending` with none, no `warning`, newest context first. */
function githubCombinedStatus(ctx: RepoContext, sha: string, latest: CommitStatus[]): Reply {
  const state = (status: CommitStatus) => (status.state === "warning" ? "failure" : status.state);
  const states = latest.map(state);
  const combined = states.some((s) => s === "error" || s === "failure")
    ? "failure"
    : states.length > 0 && states.every((s) => s === "success")
      ? "success"
      : "pending";
  const { forge, repo } = ctx;
  const commitUrl = `${forge.render.repoApiUrl(repo)}/commits/${sha}`;
  return json(200, {
    state: combined,
    sha,
    total_count: latest.length,
    statuses: [...latest].reverse().map((status) => ({
      id: status.id,
      node_id: `SC_${status.id}`,
      url: `${forge.render.repoApiUrl(repo)}/statuses/${status.sha}`,
      avatar_url: null,
      state: state(status),
      description: status.description || null,
      target_url: status.targetUrl || null,
      context: status.context,
      created_at: status.createdAt,
      updated_at: status.createdAt,
    })),
    repository: { id: repo.id, name: repo.name, full_name: `${repo.owner}/${repo.name}` },
    commit_url: commitUrl,
    url: `${commitUrl}/status`,
  });
}

import { type AccessMode, atLeast } from "../auth.ts";
import type { Forge } from "../forge.ts";
import { ApiError, notFound } from "../http.ts";
import type { Issue, Pull, Repo, User } from "../state.ts";

export interface ApiContext {
  forge: Forge;
  doer: User;
  /** Path parameters, percent-decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body; undefined when there is none. */
  body: unknown;
  url: URL;
  /** GitHub's client sends `X-GitHub-Api-Version`: where the two APIs share a path, it gets GitHub's shape. */
  dialect: "gitea" | "github";
}

/** A request under `/repos/{owner}/{repo}` that the doer may at least read. */
export interface RepoContext extends ApiContext {
  repo: Repo;
  mode: AccessMode;
}

/** Gitea's reqRepoWriter / reqAdmin answer. */
export function requireMode(ctx: RepoContext, needed: AccessMode): void {
  if (atLeast(ctx.mode, needed)) return;
  const what = needed === "write" ? "write to" : "administrate";
  throw new ApiError(403, `user should have a permission to ${what} a repo`);
}

/** The poster of an issue may edit it; so may anyone with write access. */
export function requirePosterOrWriter(ctx: RepoContext, issue: Issue): void {
  if (issue.posterId !== ctx.doer.id) requireMode(ctx, "write");
}

export function intParam(ctx: ApiContext, name: string): number {
  return Number.parseInt(ctx.params[name] ?? "", 10);
}

export function issueParam(ctx: RepoContext): Issue {
  const issue = ctx.forge.store.issue(ctx.repo, intParam(ctx, "index"));
  if (!issue) throw notFound(`issue does not exist [repo_id: ${ctx.repo.id}, index: ${ctx.params.index}]`);
  return issue;
}

export function pullParam(ctx: RepoContext): Issue & { pull: Pull } {
  const issue = ctx.forge.store.issue(ctx.repo, intParam(ctx, "index"));
  if (!issue?.pull)
    throw notFound(`pull request does not exist [repo_id: ${ctx.repo.id}, index: ${ctx.params.index}]`);
  return issue as Issue & { pull: Pull };
}

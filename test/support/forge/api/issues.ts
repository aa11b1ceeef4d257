import { z } from "zod";
import { atLeast } from "../auth.ts";
import { ApiError, json, parseBody, type Reply } from "../http.ts";
import type { Issue } from "../state.ts";
import { fullName } from "../store.ts";
import { issueParam, type RepoContext, requirePosterOrWriter } from "./context.ts";
import { issueOf } from "./dialect.ts";
import { applyIssueEdit, notifyIssue } from "./notify.ts";
import { paginate } from "./pagination.ts";

const createIssueOption = z.object({
  title: z.string().trim().min(1),
  body: z.string().optional(),
  labels: z.array(z.number().int()).optional(),
  closed: z.boolean().optional(),
});

const editIssueOption = z.object({
  title: z.string().trim().min(1).optional(),
  body: z.string().optional(),
  state: z.enum(["open", "closed"]).optional(),
});

/**
 * `state` (default open), `type` (issues / pulls), `labels` (comma-separated names; an issue must carry all
 * of them; names the repository does not have are dropped, and with none left the filter is gone, as on
 * Gitea), `since` (RFC 3339: updated at or after it), paginated. Gitea's order: newest created first, so an
 * issue opened mid-listing lands on a page already read. GitHub's (the request says which): `sort` created,
 * updated or comments (default created), `direction` (default desc), by offset, so an item updated while an
 * `updated asc` listing is paged moves to its end and the next page starts one item late.
 */
export async function listIssues(ctx: RepoContext): Promise<Reply> {
  const { repo, query, forge } = ctx;
  await forge.listings.arrive(fullName(repo));
  const state = query.get("state") ?? "open";
  const type = query.get("type");
  const names = (query.get("labels") ?? "").split(",").filter(Boolean);
  const since = query.get("since");
  const sinceMs = since ? Date.parse(since) : Number.NaN;
  if (since && Number.isNaN(sinceMs)) throw new ApiError(422, "since: invalid time");
  const labelIds = repo.labels.filter((label) => names.includes(label.name)).map((label) => label.id);
  const matches = repo.issues
    .filter((issue) => state === "all" || issue.state === state)
    .filter((issue) => (type === "issues" ? !issue.pull : type === "pulls" ? issue.pull !== null : true))
    .filter((issue) => labelIds.every((id) => issue.labelIds.includes(id)))
    .filter((issue) => Number.isNaN(sinceMs) || Date.parse(issue.updatedAt) >= sinceMs)
    .sort(ctx.dialect === "github" ? githubOrder(query) : (a, b) => b.index - a.index);
  const page = paginate(ctx, matches, forge.listings.pageSize(fullName(repo)));
  return json(
    200,
    page.items.map((issue) => issueOf(ctx, issue)),
    page.headers,
  );
}

/** GitHub's `sort` and `direction`; equal keys in number order. */
function githubOrder(query: URLSearchParams): (a: Issue, b: Issue) => number {
  const sort = query.get("sort") ?? "created";
  const sign = query.get("direction") === "asc" ? 1 : -1;
  const key = (issue: Issue) =>
    sort === "updated"
      ? Date.parse(issue.updatedAt)
      : sort === "comments"
        ? issue.comments.length
        : Date.parse(issue.createdAt);
  return (a, b) => sign * (key(a) - key(b) || a.index - b.index);
}

/**
 * A new open issue (or pull request, with `pull`) numbered next in the repository. Labels are set only for
 * writers, and ids of other repositories' labels are dropped, as on Gitea.
 */
export function newIssue<P extends Issue["pull"]>(
  ctx: RepoContext,
  input: { title: string; body?: string | undefined; labels?: number[] | undefined },
  pull: P,
): Issue & { pull: P } {
  const now = ctx.forge.store.now();
  return {
    id: ctx.forge.store.nextId(),
    index: nextIndex(ctx),
    posterId: ctx.doer.id,
    title: input.title,
    body: input.body ?? "",
    state: "open",
    labelIds: atLeast(ctx.mode, "write") ? knownLabelIds(ctx, input.labels ?? []) : [],
    comments: [],
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    pull,
  };
}

export function createIssue(ctx: RepoContext): Reply {
  const input = parseBody(createIssueOption, ctx.body);
  const { repo } = ctx;
  const issue = newIssue(ctx, input, null);
  repo.issues.push(issue);
  notifyIssue(ctx, issue, "opened");
  if (input.closed) applyIssueEdit(ctx, issue, { state: "closed" });
  return json(201, issueOf(ctx, issue));
}

export function getIssue(ctx: RepoContext): Reply {
  return json(200, issueOf(ctx, issueParam(ctx)));
}

/** Answered 201, as Gitea does. A merged pull request's state cannot change (412). */
export function editIssue(ctx: RepoContext): Reply {
  const issue = issueParam(ctx);
  const edit = parseBody(editIssueOption, ctx.body);
  requirePosterOrWriter(ctx, issue);
  if (edit.state !== undefined && issue.pull?.merged) {
    throw new ApiError(412, "cannot change state of this pull request, it was already merged");
  }
  applyIssueEdit(ctx, issue, edit);
  return json(201, issueOf(ctx, issue));
}

export function nextIndex(ctx: RepoContext): number {
  return Math.max(0, ...ctx.repo.issues.map((issue) => issue.index)) + 1;
}

/** Label ids, or names as Gitea ≥ 1.19 also takes them; ones the repository does not have are dropped. */
export function knownLabelIds(ctx: RepoContext, ids: readonly (number | string)[]): number[] {
  return ctx.repo.labels
    .filter((label) => ids.includes(label.id) || ids.includes(label.name))
    .map((label) => label.id);
}

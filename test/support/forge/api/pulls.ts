import { z } from "zod";
import { gitDir } from "../forge.ts";
import { diff, diffFiles, formatPatch } from "../git/log.ts";
import { updateRef } from "../git/refs.ts";
import { ApiError, json, notFound, parseBody, type Reply } from "../http.ts";
import { type MergeRequest, mergePull, updatePullBranch } from "../pull-merge.ts";
import { refreshPull } from "../pulls.ts";
import type { Issue, Pull } from "../state.ts";
import { checking } from "../state.ts";
import { fullName } from "../store.ts";
import { pullPayload } from "../webhooks/payloads.ts";
import { pullParam, type RepoContext, requirePosterOrWriter } from "./context.ts";
import { listedPullOf, pullOf } from "./dialect.ts";
import { newIssue } from "./issues.ts";
import { applyIssueEdit } from "./notify.ts";
import { paginate } from "./pagination.ts";

const createPullOption = z.object({
  head: z.string().min(1),
  base: z.string().min(1),
  title: z.string().trim().min(1),
  body: z.string().optional(),
  labels: z.array(z.number().int()).optional(),
});

const editPullOption = z.object({
  title: z.string().trim().min(1).optional(),
  body: z.string().optional(),
  state: z.enum(["open", "closed"]).optional(),
});

const mergeOption = z.object({
  Do: z.enum(["merge", "squash", "rebase"]),
  MergeTitleField: z.string().optional(),
  MergeMessageField: z.string().optional(),
  head_commit_id: z.string().optional(),
});

/**
 * `state` (default open), newest first, paginated; GitHub's also filters by `head` (`owner:branch`) and
 * `base`, and lists the shorter pull request shape.
 */
export function listPulls(ctx: RepoContext): Reply {
  const state = ctx.query.get("state") ?? "open";
  const [headOwner, headBranch] = (ctx.query.get("head") ?? "").split(":", 2);
  const base = ctx.query.get("base");
  // GitHub's `head` names the owner too: a head of another owner (a fork) matches nothing here.
  const ownHead = !headBranch || headOwner?.toLowerCase() === ctx.repo.owner.toLowerCase();
  const github = ctx.dialect === "github";
  const pulls = ctx.repo.issues
    .filter((issue): issue is Issue & { pull: Pull } => issue.pull !== null)
    .filter((issue) => state === "all" || issue.state === state)
    .filter((issue) => !github || !headBranch || issue.pull.headBranch === headBranch)
    .filter(() => !github || ownHead)
    .filter((issue) => !github || !base || issue.pull.baseBranch === base)
    .sort((a, b) => b.index - a.index);
  const page = paginate(ctx, pulls);
  return json(
    200,
    page.items.map((issue) => listedPullOf(ctx, issue)),
    page.headers,
  );
}

/**
 * From a branch of the same repository (`branch` or `owner:branch`; forks are not supported). One open pull
 * request per head and base: another is refused with 409. Sends `pull_request` `opened` and starts CI.
 */
export async function createPullRequest(ctx: RepoContext): Promise<Reply> {
  const input = parseBody(createPullOption, ctx.body);
  const { forge, repo, doer } = ctx;
  const [headOwner, headBranch] = input.head.includes(":")
    ? input.head.split(":", 2)
    : [repo.owner, input.head];
  if (headOwner?.toLowerCase() !== repo.owner.toLowerCase() || !headBranch) throw notFound("GetForkedRepo");
  const headSha = repo.branches[headBranch];
  const baseSha = repo.branches[input.base];
  if (!headSha || !baseSha) throw notFound();
  // As GitHub's "No commits between" and Gitea's check: a head with nothing the base lacks is refused.
  if (headBranch === input.base || headSha === baseSha) {
    throw new ApiError(422, "Invalid PullRequest: There are no changes between the head and the base");
  }
  const existing = repo.issues.find(
    (issue) =>
      issue.state === "open" && issue.pull?.headBranch === headBranch && issue.pull.baseBranch === input.base,
  );
  if (existing && ctx.dialect === "github") {
    // GitHub refuses a second one as a validation error.
    const message = `A pull request already exists for ${repo.owner}:${headBranch}.`;
    return json(422, {
      message: "Validation Failed",
      errors: [{ resource: "PullRequest", code: "custom", message }],
      documentation_url: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
    });
  }
  if (existing) {
    throw new ApiError(
      409,
      `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.id}, head_repo_id: ${repo.id}, base_repo_id: ${repo.id}, head_branch: ${headBranch}, base_branch: ${input.base}]`,
    );
  }
  const dir = gitDir(forge.reposDir, repo);
  const issue = newIssue(ctx, input, {
    headBranch,
    baseBranch: input.base,
    headSha,
    // refreshPull sets the real merge base.
    mergeBase: baseSha,
    mergeable: false,
    merged: false,
    mergedAt: null,
    mergedById: null,
    mergeCommitSha: null,
    reviews: [],
  });
  // Listed before the first await: a concurrent create takes the next number and finds this one open.
  repo.issues.push(issue);
  await refreshPull(dir, repo, issue.pull);
  await updateRef(dir, `refs/pull/${issue.index}/head`, headSha);
  forge.hooks.emit(repo, "pull_request", pullPayload(forge.render, repo, issue, "opened", doer));
  forge.ci.trigger(repo, issue);
  return json(201, pullOf(ctx, issue));
}

/** While the forge re-checks it (see `checking`), `mergeable` is false. */
export function getPull(ctx: RepoContext): Reply {
  const issue = pullParam(ctx);
  return json(200, pullOf(ctx, issue, issue.pull.mergeable && !checking(issue.pull)));
}

/** Title, body and state; answered 201, as Gitea does. A merged pull request's state cannot change (412). */
export function editPull(ctx: RepoContext): Reply {
  const issue = pullParam(ctx);
  const edit = parseBody(editPullOption, ctx.body);
  requirePosterOrWriter(ctx, issue);
  if (edit.state !== undefined && issue.pull.merged) {
    throw new ApiError(412, "cannot change state of this pull request, it was already merged");
  }
  applyIssueEdit(ctx, issue, edit);
  return json(201, pullOf(ctx, issue));
}

/** `.diff`: `git diff <merge base> <head>` (what `base...head` shows); `.patch`: format-patch of the commits. */
export async function pullDiff(ctx: RepoContext): Promise<Reply> {
  const { pull } = pullParam(ctx);
  const dir = gitDir(ctx.forge.reposDir, ctx.repo);
  const text =
    ctx.params.diffType === "patch"
      ? await formatPatch(dir, pull.mergeBase, pull.headSha)
      : await diff(dir, pull.mergeBase, pull.headSha, ctx.query.get("binary") === "true");
  return { status: 200, text };
}

/** Gitea's status names (services/convert's ToChangedFile): no lines either way reads as "unchanged". */
function changedFileStatus(kind: string, lines: number): string {
  if (kind === "D") return "deleted";
  if (kind === "A") return "added";
  if (kind === "C") return "copied";
  if (kind === "R") return "renamed";
  return lines === 0 ? "unchanged" : "changed";
}

/** `/pulls/{index}/files` (Gitea ≥ 1.18, Forgejo): the files of `merge base...head`, paginated. */
export async function pullFiles(ctx: RepoContext): Promise<Reply> {
  const { pull } = pullParam(ctx);
  const files = await diffFiles(gitDir(ctx.forge.reposDir, ctx.repo), pull.mergeBase, pull.headSha);
  const rendered = files.map((file) =>
    ctx.forge.render.changedFile(
      ctx.repo,
      pull.headSha,
      file,
      changedFileStatus(file.kind, file.additions + file.deletions),
    ),
  );
  const page = paginate(ctx, rendered);
  return json(200, page.items, page.headers);
}

/** 204 when merged, 404 otherwise. */
export function isMerged(ctx: RepoContext): Reply {
  if (!pullParam(ctx).pull.merged) throw notFound();
  return { status: 204 };
}

/** 200 with an empty body, as Gitea answers. */
export async function merge(ctx: RepoContext): Promise<Reply> {
  const form = parseBody(mergeOption, ctx.body);
  await mergeAndAnswer(ctx, {
    style: form.Do,
    title: form.MergeTitleField,
    message: form.MergeMessageField,
    headCommitId: form.head_commit_id,
  });
  return { status: 200 };
}

const githubMergeOption = z
  .object({
    commit_title: z.string().optional(),
    commit_message: z.string().optional(),
    sha: z.string().optional(),
    merge_method: z.enum(["merge", "squash", "rebase"]).default("merge"),
  })
  .nullish();

/** GitHub's `PUT /pulls/{n}/merge`: the same merge, GitHub's refusals, and its pull-request-merge-result. */
export async function mergeGithub(ctx: RepoContext): Promise<Reply> {
  const form = parseBody(githubMergeOption, ctx.body) ?? { merge_method: "merge" as const };
  const issue = await mergeAndAnswer(ctx, {
    style: form.merge_method,
    title: form.commit_title,
    message: form.commit_message,
    headCommitId: form.sha,
    dialect: "github",
  });
  return json(200, {
    sha: issue.pull.mergeCommitSha,
    merged: true,
    message: "Pull Request successfully merged",
  });
}

async function mergeAndAnswer(ctx: RepoContext, request: MergeRequest) {
  const issue = pullParam(ctx);
  await mergePull(ctx.forge, ctx.repo, issue, ctx.doer, ctx.mode, request);
  const slow = ctx.forge.slowMerges.get(fullName(ctx.repo).toLowerCase());
  if (slow) await new Promise((answer) => setTimeout(answer, slow));
  return issue;
}

/** Gitea's `POST /pulls/{index}/update`: the base merged into the head (see `updatePullBranch`). */
export async function updateBranch(ctx: RepoContext): Promise<Reply> {
  await updatePullBranch(ctx.forge, ctx.repo, pullParam(ctx), ctx.doer, ctx.mode);
  const key = fullName(ctx.repo).toLowerCase();
  const lost = ctx.forge.lostUpdates.get(key) ?? 0;
  if (lost > 0) {
    ctx.forge.lostUpdates.set(key, lost - 1);
    throw new ApiError(502, "Bad Gateway");
  }
  return { status: 200 };
}

const githubUpdateOption = z.object({ expected_head_sha: z.string().optional() }).nullish();

/**
 * GitHub's `PUT /pulls/{n}/update-branch`: the same merge of the base into the head (GitHub's a moment after
 * its 202, here before it); 422 where `expected_head_sha` is not the head or the base does not merge in.
 */
export async function updateBranchGithub(ctx: RepoContext): Promise<Reply> {
  const issue = pullParam(ctx);
  const expected = parseBody(githubUpdateOption, ctx.body)?.expected_head_sha;
  if (expected !== undefined && expected !== issue.pull.headSha)
    throw new ApiError(422, "expected head sha didn't match current head ref.");
  try {
    await updatePullBranch(ctx.forge, ctx.repo, issue, ctx.doer, ctx.mode);
  } catch (error) {
    if (error instanceof ApiError && error.status === 409)
      throw new ApiError(422, "merge conflict between base and head");
    throw error;
  }
  const url = `${ctx.forge.render.repoApiUrl(ctx.repo)}/pulls/${issue.index}`;
  return json(202, { message: "Updating pull request branch.", url });
}

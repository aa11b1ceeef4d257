import { type AccessMode, atLeast } from "./auth.ts";
import { closeByKeywords } from "./closing.ts";
import { type Forge, gitDir } from "./forge.ts";
import { commitTree, mergeTree, rebaseOnto } from "./git/merge.ts";
import { updateRef } from "./git/refs.ts";
import { ApiError, notFound } from "./http.ts";
import { refreshPull } from "./pulls.ts";
import { applyBranchUpdates } from "./push.ts";
import { checking, type Issue, type Pull, type Repo, type User } from "./state.ts";
import { fullName } from "./store.ts";
import { pullPayload } from "./webhooks/payloads.ts";

export type MergeStyle = "merge" | "squash" | "rebase";

export interface MergeRequest {
  style: MergeStyle;
  /** First line of the commit message (MergeTitleField). */
  title?: string;
  /** Rest of the message (MergeMessageField). */
  message?: string;
  /** Merge only if the head is still this commit (head_commit_id). */
  headCommitId?: string;
}

/**
 * `POST /pulls/{index}/merge` with Gitea's checks and answers, in its order: merged → 405 with an empty
 * message, closed → 404, no write access → 405, work in progress → 405, conflicts → 405 "Please try again
 * later", a moved head → 409 "head out of date". A merge really writes the commit in the bare repository
 * and moves the base branch (compare-and-swap), then behaves like a push to it; after the `pull_request`
 * `closed` webhook, issues the pull request closes by keyword ("Fixes #3") are closed when the base is the
 * default branch — and, as for any push there, those its commits' messages close.
 */
export async function mergePull(
  forge: Forge,
  repo: Repo,
  issue: Issue,
  doer: User,
  mode: AccessMode,
  request: MergeRequest,
): Promise<void> {
  const pull = issue.pull;
  if (!pull) throw notFound();
  await forge.locks.run(fullName(repo), async () => {
    if (pull.merged) throw new ApiError(405, "");
    if (issue.state === "closed") throw notFound();
    if (!atLeast(mode, "write")) throw new ApiError(405, "User not allowed to merge PR");
    if (/^\s*(?:wip:|\[wip\])/i.test(issue.title))
      throw new ApiError(405, "Work in progress PRs cannot be merged");
    const dir = gitDir(forge.reposDir, repo);
    await refreshPull(dir, repo, pull);
    const base = repo.branches[pull.baseBranch];
    if (!base || !pull.mergeable || checking(pull)) throw new ApiError(405, "Please try again later");
    if (request.headCommitId && request.headCommitId !== pull.headSha)
      throw new ApiError(409, "head out of date");

    const merged = await mergeCommit(dir, base, issue, pull, request, {
      name: doer.login,
      email: doer.email,
    });
    await updateRef(dir, `refs/heads/${pull.baseBranch}`, merged, base);
    const now = forge.store.now();
    Object.assign(pull, { merged: true, mergedAt: now, mergedById: doer.id, mergeCommitSha: merged });
    Object.assign(issue, { state: "closed", closedAt: now, updatedAt: now });
    await applyBranchUpdates(forge, repo, doer, [{ branch: pull.baseBranch, before: base, after: merged }]);
  });
  forge.hooks.emit(repo, "pull_request", pullPayload(forge.render, repo, issue, "closed", doer));
  if (pull.baseBranch === repo.defaultBranch)
    closeByKeywords(forge, repo, `${issue.title}\n${issue.body}`, doer, issue.index);
  forge.store.save();
}

async function mergeCommit(
  dir: string,
  base: string,
  issue: Issue,
  pull: Pull,
  request: MergeRequest,
  identity: { name: string; email: string },
): Promise<string> {
  if (request.style === "rebase") {
    const rebased = await rebaseOnto(dir, base, pull.headSha, identity);
    if (!rebased) throw new ApiError(409, "rebase failed because of conflict");
    return rebased;
  }
  const tree = await mergeTree(dir, base, pull.headSha);
  if (!tree) throw new ApiError(409, "merge failed because of conflict");
  const title =
    request.title?.trim() ||
    (request.style === "squash"
      ? `${issue.title} (#${issue.index})`
      : `Merge pull request '${issue.title}' (#${issue.index}) from ${pull.headBranch} into ${pull.baseBranch}`);
  const message = request.message?.trim() ? `${title}\n\n${request.message.trim()}` : title;
  const parents = request.style === "squash" ? [base] : [base, pull.headSha];
  return commitTree(dir, tree, parents, message, identity);
}

/**
 * `POST /pulls/{index}/update` (merge style), as Gitea does it: the base merged into the head branch with a
 * real merge commit by the doer, then everything a push to the head does (a `synchronized` webhook, a CI run).
 * 409 when the two conflict; a head already containing the base is left as it is.
 */
export async function updatePullBranch(forge: Forge, repo: Repo, issue: Issue, doer: User, mode: AccessMode) {
  const pull = issue.pull;
  if (!pull || issue.state === "closed") throw notFound();
  if (!atLeast(mode, "write")) throw new ApiError(403, "user should have a permission to write to a repo");
  await forge.locks.run(fullName(repo), async () => {
    const dir = gitDir(forge.reposDir, repo);
    await refreshPull(dir, repo, pull);
    const base = repo.branches[pull.baseBranch];
    const head = repo.branches[pull.headBranch];
    if (!base || !head) throw notFound();
    if (pull.mergeBase === base) return;
    const tree = await mergeTree(dir, head, base);
    if (!tree) throw new ApiError(409, "merge conflict: the base does not merge into the head");
    const message = `Merge branch '${pull.baseBranch}' into ${pull.headBranch}`;
    const merged = await commitTree(dir, tree, [head, base], message, {
      name: doer.login,
      email: doer.email,
    });
    await updateRef(dir, `refs/heads/${pull.headBranch}`, merged, head);
    await applyBranchUpdates(forge, repo, doer, [{ branch: pull.headBranch, before: head, after: merged }]);
  });
}

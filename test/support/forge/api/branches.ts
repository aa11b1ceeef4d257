import { gitDir } from "../forge.ts";
import { commitAt } from "../git/log.ts";
import { deleteRef } from "../git/refs.ts";
import { ApiError, json, type Reply } from "../http.ts";
import { applyBranchUpdates } from "../push.ts";
import { fullName } from "../store.ts";
import { payloadCommit } from "../webhooks/payloads.ts";
import { type RepoContext, requireMode } from "./context.ts";

/** One branch and its head: Gitea's Branch (`commit.id`), or GitHub's (`commit.sha`) for a GitHub client. */
export async function getBranch(ctx: RepoContext): Promise<Reply> {
  const name = ctx.params.branch ?? "";
  const sha = ctx.repo.branches[name];
  const base = ctx.forge.render.repoApiUrl(ctx.repo);
  if (!sha) {
    if (ctx.dialect === "github") throw new ApiError(404, "Branch not found");
    throw new ApiError(404, `branch does not exist [name: ${name}]`);
  }
  if (ctx.dialect === "github") {
    return json(200, { name, commit: { sha, url: `${base}/commits/${sha}` }, protected: false });
  }
  const commit = await commitAt(gitDir(ctx.forge.reposDir, ctx.repo), sha);
  return json(200, {
    name,
    commit: commit
      ? payloadCommit(ctx.forge.render, ctx.repo, commit)
      : { id: sha, url: `${ctx.forge.render.repoUrl(ctx.repo)}/commit/${sha}` },
    protected: false,
    required_approvals: 0,
    enable_status_check: false,
    status_check_contexts: [],
    user_can_push: ctx.mode !== "read",
    user_can_merge: ctx.mode !== "read",
    effective_branch_protection_name: "",
  });
}

/**
 * Gitea's `DELETE /branches/{branch}` (204; 404 for a missing branch; 403 for the default branch), and on the
 * GitHub path `DELETE /git/refs/heads/{branch}` (422 "Reference does not exist" for a missing one).
 */
export async function deleteBranch(ctx: RepoContext): Promise<Reply> {
  requireMode(ctx, "write");
  const name = ctx.params.branch ?? "";
  const { forge, repo } = ctx;
  await forge.locks.run(fullName(repo), async () => {
    const sha = repo.branches[name];
    if (!sha) {
      if (ctx.dialect === "github") throw new ApiError(422, "Reference does not exist");
      throw new ApiError(404, `branch does not exist [name: ${name}]`);
    }
    if (name === repo.defaultBranch)
      throw new ApiError(403, "user is not allowed to delete the default branch");
    await deleteRef(gitDir(forge.reposDir, repo), `refs/heads/${name}`, sha);
    await applyBranchUpdates(forge, repo, ctx.doer, [{ branch: name, before: sha, after: null }]);
  });
  return { status: 204 };
}

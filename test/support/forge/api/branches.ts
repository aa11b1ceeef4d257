import { ApiError, json, type Reply } from "../http.ts";
import type { RepoContext } from "./context.ts";

/** One branch and its head: Gitea's Branch (`commit.id`), or GitHub's (`commit.sha`) for a GitHub client. */
export function getBranch(ctx: RepoContext): Reply {
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
  return json(200, {
    name,
    commit: { id: sha, url: `${ctx.forge.render.repoUrl(ctx.repo)}/commit/${sha}` },
    protected: false,
    required_approvals: 0,
    enable_status_check: false,
    status_check_contexts: [],
    user_can_push: ctx.mode !== "read",
    user_can_merge: ctx.mode !== "read",
    effective_branch_protection_name: "",
  });
}

import { gitDir } from "../forge.ts";
import { git } from "../git/exec.ts";
import { commitAt, commitShape } from "../git/log.ts";
import { resolveCommit } from "../git/refs.ts";
import { ApiError, json, type Reply } from "../http.ts";
import type { RepoContext } from "./context.ts";

/** Gitea's verification of a commit nobody signed. */
const UNSIGNED = {
  verified: false,
  reason: "gpg.error.not_signed_commit",
  signature: "",
  signer: null,
  payload: "",
};

/**
 * One commit and its parents, first parent first: Gitea's `GET /git/commits/{sha}` (Commit, a sha or a ref)
 * and GitHub's `GET /commits/{ref}` (commit).
 */
export async function getCommit(ctx: RepoContext): Promise<Reply> {
  const dir = gitDir(ctx.forge.reposDir, ctx.repo);
  const sha = await resolveCommit(dir, ctx.params.sha ?? ctx.params.ref ?? "");
  const shown = sha ? await commitOf(ctx, dir, sha) : undefined;
  if (!shown) {
    if (ctx.dialect === "github") throw new ApiError(422, `No commit found for SHA: ${ctx.params.ref}`);
    throw new ApiError(404, `object does not exist [id: ${ctx.params.sha}]`);
  }
  return json(200, shown);
}

/**
 * The commit `sha` in the dialect's shape, or undefined where there is none. Authors are not linked to users
 * here (null, as both forges answer for an email no account has).
 */
export async function commitOf(ctx: RepoContext, dir: string, sha: string) {
  const commit = await commitAt(dir, sha);
  if (!commit) return undefined;
  const { parents } = await commitShape(dir, sha);
  const api = ctx.forge.render.repoApiUrl(ctx.repo);
  const web = ctx.forge.render.repoUrl(ctx.repo);
  const person = (who: { name: string; email: string }) => ({ ...who, date: commit.timestamp });
  const treeSha = (await git(["--git-dir", dir, "rev-parse", `${sha}^{tree}`])).stdout.trim();
  const tree = { sha: treeSha, url: `${api}/git/trees/${treeSha}` };
  const inner = {
    url: `${api}/git/commits/${sha}`,
    author: person(commit.author),
    committer: person(commit.committer),
    message: commit.message,
    tree,
  };
  if (ctx.dialect === "github") {
    return {
      url: `${api}/commits/${sha}`,
      sha,
      node_id: `C_${sha}`,
      html_url: `${web}/commit/${sha}`,
      comments_url: `${api}/commits/${sha}/comments`,
      commit: { ...inner, comment_count: 0 },
      author: null,
      committer: null,
      parents: parents.map((p) => ({ sha: p, url: `${api}/commits/${p}`, html_url: `${web}/commit/${p}` })),
    };
  }
  return {
    url: `${api}/git/commits/${sha}`,
    sha,
    created: commit.timestamp,
    html_url: `${web}/commit/${sha}`,
    commit: { ...inner, tree: { ...tree, created: commit.timestamp }, verification: UNSIGNED },
    author: null,
    committer: null,
    parents: parents.map((p) => ({ sha: p, url: `${api}/git/commits/${p}`, created: commit.timestamp })),
  };
}

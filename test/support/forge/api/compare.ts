/**
 * GitHub's `GET /compare/{basehead}` (`BASE...HEAD`, each a branch or a sha): its commit-comparison, the counts
 * as `git rev-list --left-right --count BASE...HEAD` has them, the commits of `BASE..HEAD` oldest first: the
 * last 250 without a paging parameter, else a page of `per_page`. Without `files` (optional in the
 * description; nobody here reads them). Gitea's compare, of another shape, is not served.
 */
import { gitDir } from "../forge.ts";
import { git } from "../git/exec.ts";
import { mergeBase } from "../git/merge.ts";
import { resolveCommit } from "../git/refs.ts";
import { ApiError, json, notFound, type Reply } from "../http.ts";
import { commitOf } from "./commits.ts";
import type { RepoContext } from "./context.ts";
import { paginate } from "./pagination.ts";

/** "Without any paging parameter … the returned list is limited to 250 commits." */
const UNPAGED_COMMITS = 250;

export async function compare(ctx: RepoContext): Promise<Reply> {
  if (ctx.dialect !== "github") throw notFound();
  const basehead = ctx.params.basehead ?? "";
  const [baseRef = "", headRef = ""] = basehead.split("...", 2);
  const dir = gitDir(ctx.forge.reposDir, ctx.repo);
  const base = await resolveCommit(dir, baseRef);
  const head = await resolveCommit(dir, headRef);
  const since = base && head ? await mergeBase(dir, base, head) : null;
  if (!base || !head || !since) throw new ApiError(404, "Not Found");
  const counts = await git(["--git-dir", dir, "rev-list", "--left-right", "--count", `${base}...${head}`]);
  const [behindBy = 0, aheadBy = 0] = counts.stdout.trim().split(/\s+/).map(Number);
  const listed = await git(["--git-dir", dir, "rev-list", "--reverse", `${base}..${head}`]);
  const shas = listed.stdout.split("\n").filter(Boolean);
  const paged = ctx.query.has("per_page") || ctx.query.has("page");
  const page = paged ? paginate(ctx, shas) : { items: shas.slice(-UNPAGED_COMMITS), headers: {} };
  const commit = async (sha: string) => {
    const shown = await commitOf(ctx, dir, sha);
    if (!shown) throw new Error(`no commit ${sha}`);
    return shown;
  };
  const web = `${ctx.forge.render.repoUrl(ctx.repo)}/compare`;
  const { owner } = ctx.repo;
  return json(
    200,
    {
      url: `${ctx.forge.render.repoApiUrl(ctx.repo)}/compare/${basehead}`,
      html_url: `${web}/${basehead}`,
      permalink_url: `${web}/${owner}:${base}...${owner}:${head}`,
      diff_url: `${web}/${basehead}.diff`,
      patch_url: `${web}/${basehead}.patch`,
      base_commit: await commit(base),
      merge_base_commit: await commit(since),
      status: status(aheadBy, behindBy),
      ahead_by: aheadBy,
      behind_by: behindBy,
      total_commits: shas.length,
      commits: await Promise.all(page.items.map(commit)),
    },
    page.headers,
  );
}

function status(aheadBy: number, behindBy: number): "identical" | "ahead" | "behind" | "diverged" {
  if (aheadBy > 0 && behindBy > 0) return "diverged";
  if (aheadBy > 0) return "ahead";
  return behindBy > 0 ? "behind" : "identical";
}

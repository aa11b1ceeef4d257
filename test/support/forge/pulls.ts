import { mergeBase, mergeTree } from "./git/merge.ts";
import type { Pull, Repo } from "./state.ts";

/** Recomputes the merge base and whether the head merges cleanly, after the head or the base moved. */
export async function refreshPull(gitDir: string, repo: Repo, pull: Pull): Promise<void> {
  const base = repo.branches[pull.baseBranch];
  const common = base ? await mergeBase(gitDir, base, pull.headSha) : null;
  if (!base || !common) {
    // No base branch any more, or unrelated histories: Gitea cannot merge either.
    pull.mergeable = false;
    return;
  }
  pull.mergeBase = common;
  pull.mergeable = (await mergeTree(gitDir, base, pull.headSha)) !== null;
}

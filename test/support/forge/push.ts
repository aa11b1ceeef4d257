import { closeByKeywords } from "./closing.ts";
import { type Forge, gitDir } from "./forge.ts";
import { pushedCommits } from "./git/log.ts";
import { type BranchUpdate, updateRef } from "./git/refs.ts";
import { refreshPull } from "./pulls.ts";
import type { Repo, User } from "./state.ts";
import { fullName } from "./store.ts";
import { pullPayload, pushPayload } from "./webhooks/payloads.ts";

/**
 * What follows branch updates (a push, or a merge the forge made), in Gitea's order: the branch heads in the
 * state, a `push` webhook per updated branch, then for every open pull request whose head moved a
 * `refs/pull/<n>/head` update, a `synchronized` webhook and a CI run; pull requests whose base moved get
 * their mergeability recomputed. Deleting a branch sends no webhook (Gitea sends `delete`, not emitted here).
 */
export async function applyBranchUpdates(
  forge: Forge,
  repo: Repo,
  pusher: User,
  updates: BranchUpdate[],
): Promise<void> {
  const dir = gitDir(forge.reposDir, repo);
  for (const { branch, before, after } of updates) {
    if (after === null) {
      delete repo.branches[branch];
      continue;
    }
    repo.branches[branch] = after;
    const commits = await pushedCommits(dir, branch, before, after);
    forge.hooks.emit(
      repo,
      "push",
      pushPayload(forge.render, repo, { branch, before, after, commits }, pusher),
    );
    // Gitea closes what the pushed commits' messages close by keyword, on the default branch only.
    if (branch === repo.defaultBranch)
      for (const commit of [...commits].reverse()) closeByKeywords(forge, repo, commit.message, pusher);
  }
  const moved = new Set(updates.map((update) => update.branch));
  // Gitea re-checks the pull requests whose head or base moved in the background (`checking`).
  const recheck = forge.mergeChecks.get(fullName(repo).toLowerCase()) ?? 0;
  for (const issue of repo.issues) {
    const pull = issue.pull;
    if (!pull || issue.state !== "open") continue;
    const head = repo.branches[pull.headBranch];
    if (recheck > 0 && (moved.has(pull.baseBranch) || moved.has(pull.headBranch)))
      pull.checkingReads = recheck;
    if (moved.has(pull.headBranch) && head && head !== pull.headSha) {
      pull.headSha = head;
      await updateRef(dir, `refs/pull/${issue.index}/head`, head);
      await refreshPull(dir, repo, pull);
      issue.updatedAt = forge.store.now();
      forge.hooks.emit(
        repo,
        "pull_request_sync",
        pullPayload(forge.render, repo, issue, "synchronized", pusher),
      );
      forge.ci.trigger(repo, issue);
    } else if (moved.has(pull.baseBranch) || moved.has(pull.headBranch)) {
      await refreshPull(dir, repo, pull);
    }
  }
  forge.store.save();
}

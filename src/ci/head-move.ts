/**
 * The head check of the review and merge gates: a branch found away from the issue's head is read further
 * from the forge's history (src/domain/head-move.ts) — the new head's parents and, when it merges something
 * into the head, the base's recent first parents — so that the issue's own update from the base, recorded
 * by no attempt that lived to see it, is `branch_updated` and not someone's push.
 */
import { issueBranch } from "../domain/branch.ts";
import { BASE_HISTORY_READS, headMove, mergedBaseCommit } from "../domain/head-move.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { ForgeClient } from "../forge/client/index.ts";

/** null while `conveyor/<number>` is at `headSha`; else `branch_updated` or `head_mismatch`. */
export async function readHeadMove(
  forge: ForgeClient,
  number: number,
  headSha: string,
  base: string,
): Promise<LifecycleEvent | null> {
  const actual = await forge.getBranchHead(issueBranch(number));
  if (actual === null || actual === headSha) return headMove(number, { claimed: headSha, actual });
  const parents = await forge.getCommitParents(actual);
  const merged = mergedBaseCommit(headSha, parents);
  const baseHistory: string[] = [];
  let commit = merged === null ? null : await forge.getBranchHead(base);
  // Back along the base's first parents (each merge or push onto it) until the merged commit shows.
  while (commit && baseHistory.length < BASE_HISTORY_READS) {
    baseHistory.push(commit);
    if (commit === merged) break;
    commit = (await forge.getCommitParents(commit))[0] ?? null;
  }
  return headMove(number, { claimed: headSha, actual, parents, baseHistory });
}

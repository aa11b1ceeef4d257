/**
 * The pull request merged: the one `merge_confirmed` the effects send, whether the merge's own answer
 * says so or the forge, read afterwards, does (a merge whose answer was lost, or a human's by hand).
 */
import type { LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import type { ForgeClient } from "../../../src/forge/client/index.ts";

/** The issue's own pull request `pr` merged at `sha` (the head it pinned, or the forge's), when known. */
export const mergeConfirmed = (pr: number, sha: string | null): LifecycleEvent => ({
  type: "merge_confirmed",
  number: pr,
  byConveyor: true,
  ...(sha && { sha }),
});

/** `merge_confirmed` when the forge has pull request `pr` merged, by anyone; null while it is not. */
export async function readMerged(forge: ForgeClient, pr: number): Promise<LifecycleEvent | null> {
  const pull = await forge.getPullRequest(pr);
  return pull.merged ? mergeConfirmed(pr, pull.headSha) : null;
}

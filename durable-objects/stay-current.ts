/**
 * The stay-current gate of the review and the merge effects: reads the pull request's mergeability, acts on
 * the pure decision (src/domain/stay-current.ts) and answers with the lifecycle event, or null to go ahead.
 */

import type { LifecycleEvent } from "../src/domain/lifecycle.ts";
import { type Mergeability, stayCurrent } from "../src/domain/stay-current.ts";
import type { ForgeClient } from "../src/forge/client/index.ts";

/** Thrown while the forge computes mergeability or the updated head: the outbox retries with backoff. */
export class MergeabilityPending extends Error {}

export async function keepCurrent(
  forge: ForgeClient,
  pr: number,
  headSha: string,
): Promise<LifecycleEvent | null> {
  const state: Mergeability = await forge.getMergeability(pr);
  const step = stayCurrent(state);
  switch (step.action) {
    case "proceed":
      return null;
    case "ask_again":
      throw new MergeabilityPending(`the forge is still computing whether #${pr} merges`);
    case "resolve_conflict":
      return { type: "conflict", files: step.files };
    case "update_branch": {
      if ((await forge.updateBranch(pr, headSha)) === "conflict") return { type: "conflict", files: [] };
      // Gitea and Forgejo update at once; GitHub a moment later: ask again until the new head shows.
      const updated = (await forge.getPullRequest(pr)).headSha;
      if (updated === headSha) throw new MergeabilityPending(`waiting for the updated head of #${pr}`);
      return { type: "branch_updated", headSha: updated };
    }
  }
}

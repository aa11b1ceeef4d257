/**
 * The stay-current gate of the review and the merge effects: reads the pull request's mergeability, acts on
 * the pure decision (src/domain/stay-current.ts) and answers with the lifecycle event, or null to go ahead.
 */

import type { LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import {
  CHECKING_READ_INTERVAL_MS,
  type StayCurrentAction,
  stayCurrent,
} from "../../../src/domain/stay-current.ts";
import { ALWAYS, type UpToDateRule } from "../../../src/domain/up-to-date.ts";
import type { ForgeClient } from "../../../src/forge/client/index.ts";
import { readMerged } from "./merged.ts";

/** GitHub's update-branch answers 202 and moves the head shortly after: read it this often, this long. */
const UPDATE_READS = 20;
const UPDATE_READ_INTERVAL_MS = 500;

/** Thrown while the forge computes mergeability or the updated head: the outbox retries with backoff. */
export class MergeabilityPending extends Error {}

/**
 * `rule` and `mayUpdate`, asked only for a branch that is behind without conflict: `merge.upToDate` with the
 * base's protection (./up-to-date.ts); then, right before its update, `mayUpdate`: false lets it go ahead as
 * it is (the review's, while other merges are queued); throwing leaves it as it is (the merge's, having lost
 * its turn to merge).
 */
export async function keepCurrent(
  forge: ForgeClient,
  pr: number,
  headSha: string,
  {
    mayUpdate = async () => true,
    rule = async () => ALWAYS,
  }: { mayUpdate?: () => Promise<boolean>; rule?: () => Promise<UpToDateRule> } = {},
): Promise<LifecycleEvent | null> {
  const { step, behind } = await decide(forge, pr, rule);
  // A pull request merged meanwhile (by hand, or an earlier attempt's answer lost) reads as behind or in
  // conflict with the base that now holds it: updating it would fail, a conflict would undo the merge, and
  // going ahead as it is (`merge.upToDate: when_required`) would ask the critic about a merged head.
  if (behind || step.action === "resolve_conflict") {
    const merged = await readMerged(forge, pr);
    if (merged) return merged;
  }
  switch (step.action) {
    case "proceed":
      return null;
    case "ask_again":
      throw new MergeabilityPending(`the forge is still computing whether #${pr} merges`);
    case "resolve_conflict":
      return { type: "conflict", files: step.files };
    case "update_branch": {
      if (!(await mayUpdate())) return null;
      if ((await forge.updateBranch(pr, headSha)) === "conflict") return { type: "conflict", files: [] };
      // Gitea and Forgejo update at once; GitHub a moment later. An attempt that dies before seeing it leaves
      // it to the next, whose head check tells the update from a push by its parents (src/ci/head-move.ts).
      for (let read = 0; read < UPDATE_READS; read++) {
        const updated = (await forge.getPullRequest(pr)).headSha;
        if (updated !== headSha) return { type: "branch_updated", headSha: updated };
        await new Promise((resolve) => setTimeout(resolve, UPDATE_READ_INTERVAL_MS));
      }
      throw new MergeabilityPending(`the updated head of #${pr} did not show in time`);
    }
  }
}

/**
 * The decision on the forge's answer, read again while it may be Gitea's re-check after the head or base
 * moved ("not mergeable" meanwhile): taken for a conflict, it would cost an update job for no conflict.
 */
async function decide(
  forge: ForgeClient,
  pr: number,
  rule: () => Promise<UpToDateRule>,
): Promise<{ step: Exclude<StayCurrentAction, { action: "read_again" }>; behind: boolean }> {
  for (let reads = 1; ; reads++) {
    const state = await forge.getMergeability(pr);
    const behind = state.kind === "behind";
    const step = stayCurrent(state, reads, behind ? await rule() : ALWAYS);
    if (step.action !== "read_again") return { step, behind };
    await new Promise((resolve) => setTimeout(resolve, CHECKING_READ_INTERVAL_MS));
  }
}

/**
 * Whether branch protection holds Conveyor's merge for people's approval, read from the forge: the base's
 * protection and the pull request's reviews, decided by src/domain/merge-rules.ts. Asked when the critic
 * approves (the merge then waits in the vault instead of being refused) and when the forge refuses a merge.
 */
import { protectionHold, refusedForApprovals, standingApprovals } from "../domain/merge-rules.ts";
import type { ForgeClient } from "./client/index.ts";

export type HoldTarget = {
  prNumber: number;
  headSha: string | null;
  /** The pull request's author: Conveyor's own account, whose approval no forge counts. */
  author: string;
  branch: string;
};

export async function approvalHold(forge: ForgeClient, target: HoldTarget): Promise<string | null> {
  const protection = await forge.getBranchProtection(target.branch);
  // Nothing to count: no protection, none asked, or a rule the token may not read (the merge's refusal says).
  if (!protection || (!protection.requiredApprovals && !protection.codeOwnerReview)) return null;
  const approvals = standingApprovals(await forge.listReviews(target.prNumber), {
    author: target.author,
    headSha: target.headSha,
    dismissStale: protection.dismissStale,
  });
  return protectionHold(protection, approvals, target.branch);
}

/**
 * Why a refused merge waits for people rather than escalating: what protection asks that is not given, or
 * the forge's own words where they say approvals are missing (a rule the token may not read). Null: the
 * refusal is of another kind.
 */
export async function refusalHold(
  forge: ForgeClient,
  target: HoldTarget,
  refusal: string,
): Promise<string | null> {
  const hold = await approvalHold(forge, target);
  if (hold) return hold;
  return refusedForApprovals(refusal)
    ? `the forge refused the merge for want of approvals (${refusal}): a person with write access approves the pull request on the forge`
    : null;
}

/**
 * The repository's merge rules, decided: which merge method Conveyor uses, and whether branch protection asks
 * for approvals Conveyor cannot give (one forge account opens each pull request, and no forge lets an author
 * approve their own). Pure.
 */
import type { BranchProtection, MergeMethod, MergeMethods, PullReview } from "../forge/client/types.ts";
import { sameLogin } from "./logins.ts";

/** `auto`: the repository's allowed methods, preferring squash (one commit per issue), then merge, then rebase. */
export const MERGE_METHOD_SETTINGS = ["auto", "merge", "squash", "rebase"] as const;
export type MergeMethodSetting = (typeof MERGE_METHOD_SETTINGS)[number];

const PREFERENCE: readonly MergeMethod[] = ["squash", "merge", "rebase"];

/**
 * The method to merge with, or why none may be used. A forge that does not say what it allows (null) gets
 * the setting, or for `auto` a merge commit (what every forge allows unless told otherwise): its refusal, if
 * any, then names the cause.
 */
export function mergeMethod(
  setting: MergeMethodSetting,
  allowed: MergeMethods,
): { method: MergeMethod } | { refused: string } {
  if (setting !== "auto") {
    if (!allowed || allowed[setting]) return { method: setting };
    return {
      refused: `merge.method is ${setting}, which the repository does not allow (it allows ${list(allowed)})`,
    };
  }
  if (!allowed) return { method: "merge" };
  const method = PREFERENCE.find((m) => allowed[m]);
  return method
    ? { method }
    : { refused: "the repository allows none of the merge methods merge, squash, rebase" };
}

const list = (allowed: Exclude<MergeMethods, null>) =>
  PREFERENCE.filter((m) => allowed[m]).join(", ") || "none of merge, squash, rebase";

/**
 * The people whose approval of the head stands, as the forges count them: each reviewer's latest verdict
 * (an approval, a request for changes, a dismissal; a comment changes nothing) is an approval, given by
 * someone other than the pull request's author, and, where a push dismisses approvals, of the current head.
 */
export function standingApprovals(
  reviews: readonly PullReview[],
  { author, headSha, dismissStale }: { author: string; headSha: string | null; dismissStale: boolean },
): string[] {
  const latest = new Map<string, PullReview>();
  for (const review of reviews) {
    if (review.state === "commented" || review.state === "pending" || !review.author) continue;
    latest.set(review.author.toLowerCase(), review);
  }
  return [...latest.values()]
    .filter((review) => review.state === "approved" && !sameLogin(review.author, author))
    .filter((review) => !dismissStale || !headSha || review.commitId === headSha)
    .map((review) => review.author);
}

/**
 * Why the merge must wait for people to approve the pull request on the forge, or null. A rule the token
 * could not read (`requiredApprovals` null) holds nothing here: the forge's refusal at the merge says it.
 */
export function protectionHold(
  protection: BranchProtection | null,
  approvals: readonly string[],
  branch: string,
): string | null {
  if (!protection || protection.requiredApprovals === null) return null;
  const { requiredApprovals: required } = protection;
  if (approvals.length < required) {
    return `branch protection on ${branch} requires ${required} approving review${required === 1 ? "" : "s"} (${approvals.length} given), and Conveyor cannot approve its own pull request: a person with write access approves it on the forge`;
  }
  if (protection.codeOwnerReview && approvals.length === 0) {
    return `branch protection on ${branch} requires a code owner's review: a code owner approves the pull request on the forge`;
  }
  return null;
}

/** The forge's refusal of a merge for want of approvals (GitHub's and Gitea's words for it). */
export const refusedForApprovals = (reason: string): boolean =>
  /approving review|enough approvals|code owner|review is required|requested changes|official review/i.test(
    reason,
  );

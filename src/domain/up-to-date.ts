/**
 * Whether a pull request that is only behind its base (no conflict) is brought up to date before its review
 * and its merge (`merge.upToDate`, docs/operating.md). `always`: every time, so that what merges is what CI
 * tested. `when_required`: only where the base's protection refuses a head that does not contain the base
 * (GitHub's strict status checks, Gitea's and Forgejo's block_on_outdated_branch); elsewhere it is reviewed
 * and merged as it is, as a person merging there would, and the forge still refuses a conflict. Pure.
 */
import type { BranchProtection } from "../forge/client/types.ts";

export const UP_TO_DATE_SETTINGS = ["always", "when_required"] as const;
export type UpToDateSetting = (typeof UP_TO_DATE_SETTINGS)[number];

/** The setting, and under `when_required` the base's protection as the token reads it (null: none). */
export type UpToDateRule =
  | { setting: "always" }
  | { setting: "when_required"; protection: BranchProtection | null };

export const ALWAYS: UpToDateRule = { setting: "always" };

/**
 * Whether a head that is behind must be updated. A protection whose rule the token may not read
 * (`upToDate` null) counts as requiring it: guessed the other way where it does, the critic would review a
 * head the forge then refuses to merge, and the update, its CI and a second review would follow anyway;
 * guessed this way where it does not, it costs what `always` costs.
 */
export function updateRequired(rule: UpToDateRule): boolean {
  if (rule.setting === "always") return true;
  return rule.protection !== null && rule.protection.upToDate !== false;
}

/**
 * The forge's refusal of a merge because the head is behind its base, in its own words: Gitea's and Forgejo's
 * 405 "not allowed to merge [reason: The head branch is behind the base branch]", GitHub's "Head branch is out
 * of date. Review and try the merge again." (also inside a ruleset's "Repository rule violations found") and
 * "Head branch is not up to date with the base branch". Not Gitea's 409 "head out of date" nor GitHub's
 * "Head branch was modified": those say the head moved from the sha the merge pinned, which is someone's push.
 */
export const refusedAsBehind = (reason: string): boolean =>
  /head branch is (?:out of date|not up to date with the base|behind the base)/i.test(reason);

/**
 * Branch protection and allowed merge styles, enforced at the merge as the real forges do and answered in
 * their words: Gitea's CheckPullBranchProtections (in its order: required status checks, approvals, requested
 * changes, outdated branch) and its "not an allowed merge style", or GitHub's 405 messages for a GitHub client.
 * Approvals count as Gitea's "official" ones: each reviewer's latest verdict, an approval by someone with
 * write access who is not the author, of the head where the rule dismisses stale approvals.
 */
import { accessMode, atLeast } from "./auth.ts";
import type { Issue, Protection, Pull, Repo, Review } from "./state.ts";
import { latestStatuses } from "./statuses.ts";
import type { Store } from "./store.ts";

export type Dialect = "gitea" | "github";
export type MergeStyle = "merge" | "squash" | "rebase";

/** The rule protecting `branch`: its name, or a glob Gitea matches it with (`*` any run of characters). */
export function protectionOf(repo: Repo, branch: string): Protection | undefined {
  return repo.protections.find((rule) => glob(rule.ruleName)(branch));
}

const glob = (pattern: string) => {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const regex = new RegExp(`^${source}$`);
  return (name: string) => regex.test(name);
};

const GITHUB_STYLE: Record<MergeStyle, string> = {
  merge: "Merge commits",
  squash: "Squash merges",
  rebase: "Rebase merges",
};

/** Why the repository refuses `style`, in the dialect's words (405), or null. */
export function styleRefusal(repo: Repo, style: MergeStyle, dialect: Dialect): string | null {
  if (repo.mergeStyles[style]) return null;
  return dialect === "github"
    ? `${GITHUB_STYLE[style]} are not allowed on this repository.`
    : `${style} is not allowed an allowed merge style for this repository`;
}

/** Why branch protection refuses the merge now (405), or null. */
export function protectionRefusal(
  store: Store,
  repo: Repo,
  issue: Issue & { pull: Pull },
  dialect: Dialect,
): string | null {
  const rule = protectionOf(repo, issue.pull.baseBranch);
  if (!rule) return null;
  const { pull } = issue;
  const gitea = (reason: string) => `not allowed to merge [reason: ${reason}]`;
  const failing = requiredChecksFailing(repo, pull.headSha, rule);
  if (failing !== null) {
    return dialect === "github"
      ? `Required status check "${failing}" is expected.`
      : gitea("Not all required status checks successful");
  }
  const approvals = verdicts(store, repo, issue, rule).filter((review) => review.state === "APPROVED").length;
  if (approvals < rule.requiredApprovals || (rule.requireCodeOwnerReviews && approvals === 0)) {
    const n = Math.max(rule.requiredApprovals, 1);
    return dialect === "github"
      ? `At least ${n} approving review${n === 1 ? " is" : "s are"} required by reviewers with write access.`
      : gitea("Does not have enough approvals");
  }
  if (
    rule.blockOnRejectedReviews &&
    verdicts(store, repo, issue, rule).some((r) => r.state === "REQUEST_CHANGES")
  ) {
    return dialect === "github"
      ? "Changes must be made through a pull request."
      : gitea("There are requested changes");
  }
  if (rule.blockOnOutdatedBranch && pull.mergeBase !== repo.branches[pull.baseBranch]) {
    return dialect === "github"
      ? "Head branch is not up to date with the base branch."
      : gitea("The head branch is behind the base branch");
  }
  return null;
}

/** The first required context with no passing check on `sha`, or null when every one has passed. */
function requiredChecksFailing(repo: Repo, sha: string, rule: Protection): string | null {
  if (!rule.enableStatusCheck) return null;
  const statuses = latestStatuses(repo, sha).map((s) => ({ name: s.context, passed: s.state === "success" }));
  const runs = repo.checkRuns
    .filter((run) => run.sha === sha)
    .map((run) => ({
      name: run.name,
      passed: ["success", "neutral", "skipped"].includes(run.conclusion ?? ""),
    }));
  const checks = [...statuses, ...runs];
  for (const context of rule.statusCheckContexts) {
    const matched = checks.filter((check) => glob(context)(check.name));
    if (matched.length === 0 || matched.some((check) => !check.passed)) return context;
  }
  return null;
}

/** Each official reviewer's latest approval or request for changes (comments change nothing). */
function verdicts(store: Store, repo: Repo, issue: Issue & { pull: Pull }, rule: Protection): Review[] {
  const latest = new Map<number, Review>();
  for (const review of issue.pull.reviews) {
    if (review.state !== "APPROVED" && review.state !== "REQUEST_CHANGES") continue;
    if (review.reviewerId === issue.posterId || !official(store, repo, review)) continue;
    latest.set(review.reviewerId, review);
  }
  return [...latest.values()].filter(
    (review) => !rule.dismissStaleApprovals || review.commitId === issue.pull.headSha,
  );
}

/** Gitea's `official`: a review by someone with write access to the repository. */
const official = (store: Store, repo: Repo, review: Review): boolean =>
  atLeast(accessMode(store.user(review.reviewerId), repo), "write");

import { describe, expect, it } from "vitest";
import {
  mergeMethod,
  protectionHold,
  refusedForApprovals,
  standingApprovals,
} from "../../src/domain/merge-rules.ts";
import type { BranchProtection, PullReview } from "../../src/forge/client/types.ts";
import { mergeCommitMessage } from "../../src/forge/post/commit-message.ts";

const ALL = { merge: true, squash: true, rebase: true };

describe("mergeMethod", () => {
  it("auto prefers squash, then a merge commit, then rebase, among those the repository allows", () => {
    expect(mergeMethod("auto", ALL)).toEqual({ method: "squash" });
    expect(mergeMethod("auto", { ...ALL, squash: false })).toEqual({ method: "merge" });
    expect(mergeMethod("auto", { merge: false, squash: false, rebase: true })).toEqual({ method: "rebase" });
    expect(mergeMethod("auto", { merge: false, squash: false, rebase: false })).toEqual({
      refused: "the repository allows none of the merge methods merge, squash, rebase",
    });
  });

  it("a method the setting names is used only where the repository allows it", () => {
    expect(mergeMethod("rebase", ALL)).toEqual({ method: "rebase" });
    expect(mergeMethod("merge", { merge: false, squash: true, rebase: true })).toEqual({
      refused: "merge.method is merge, which the repository does not allow (it allows squash, rebase)",
    });
  });

  it("a forge that does not say what it allows gets the setting, or for auto a merge commit", () => {
    expect(mergeMethod("squash", null)).toEqual({ method: "squash" });
    expect(mergeMethod("auto", null)).toEqual({ method: "merge" });
  });
});

const review = (author: string, state: PullReview["state"], commitId = "head"): PullReview => ({
  id: 1,
  body: "",
  author,
  state,
  commitId,
  dismissed: state === "dismissed",
  submittedAt: null,
});

describe("standingApprovals", () => {
  const of = (reviews: PullReview[], dismissStale = false) =>
    standingApprovals(reviews, { author: "conveyor", headSha: "head", dismissStale });

  it("counts each reviewer's latest verdict; a comment after an approval changes nothing", () => {
    expect(
      of([review("alice", "approved"), review("alice", "commented"), review("bob", "approved")]),
    ).toEqual(["alice", "bob"]);
    expect(of([review("alice", "approved"), review("Alice", "changes_requested")])).toEqual([]);
    expect(of([review("alice", "changes_requested"), review("alice", "approved")])).toEqual(["alice"]);
    expect(of([review("alice", "approved"), review("alice", "dismissed")])).toEqual([]);
  });

  it("never counts the author's own review, nor a pending one", () => {
    expect(of([review("Conveyor", "approved"), review("bob", "pending")])).toEqual([]);
  });

  it("where a push dismisses approvals, counts only those of the head", () => {
    const reviews = [review("alice", "approved", "old"), review("bob", "approved")];
    expect(of(reviews)).toEqual(["alice", "bob"]);
    expect(of(reviews, true)).toEqual(["bob"]);
  });
});

const rule = (extra: Partial<BranchProtection> = {}): BranchProtection => ({
  requiredApprovals: 1,
  requiredChecks: [],
  upToDate: false,
  codeOwnerReview: false,
  dismissStale: false,
  ...extra,
});

describe("protectionHold", () => {
  it("holds while fewer people approved than the rule asks, saying how many and who can", () => {
    expect(protectionHold(rule({ requiredApprovals: 2 }), ["alice"], "main")).toBe(
      "branch protection on main requires 2 approving reviews (1 given), and Conveyor cannot approve its own pull request: a person with write access approves it on the forge",
    );
    expect(protectionHold(rule(), ["alice"], "main")).toBeNull();
  });

  it("holds for a code owner's review until someone approved", () => {
    const owners = rule({ requiredApprovals: 0, codeOwnerReview: true });
    expect(protectionHold(owners, [], "main")).toContain("requires a code owner's review");
    expect(protectionHold(owners, ["alice"], "main")).toBeNull();
  });

  it("holds nothing without protection, or where the token may not read the rule (the merge's refusal says)", () => {
    expect(protectionHold(null, [], "main")).toBeNull();
    expect(protectionHold(rule({ requiredApprovals: null }), [], "main")).toBeNull();
    expect(protectionHold(rule({ requiredApprovals: 0 }), [], "main")).toBeNull();
  });
});

describe("refusedForApprovals", () => {
  it("knows both forges' words for a merge refused for want of approvals, and no others", () => {
    expect(
      refusedForApprovals("At least 1 approving review is required by reviewers with write access."),
    ).toBe(true);
    expect(refusedForApprovals("not allowed to merge [reason: Does not have enough approvals]")).toBe(true);
    expect(refusedForApprovals("Waiting on code owner review from acme/core.")).toBe(true);
    expect(refusedForApprovals("Please try again later")).toBe(false);
    expect(refusedForApprovals("Squash merges are not allowed on this repository.")).toBe(false);
    expect(refusedForApprovals('Required status check "lint" is expected.')).toBe(false);
  });
});

describe("mergeCommitMessage", () => {
  it("is the issue's title with the pull request's number, closing only its own issue", () => {
    expect(mergeCommitMessage({ number: 7, title: "Add the parser" }, 12)).toEqual({
      title: "Add the parser (#12)",
      message: "Closes #7",
    });
  });

  it("makes a keyword in the title a reference, keeps one line, and bounds its length", () => {
    const { title } = mergeCommitMessage(
      { number: 7, title: "Fixes #3 and closes acme/x#4\nsecond line" },
      12,
    );
    expect(title).toBe("refs #3 and refs acme/x#4 (#12)");
    expect(mergeCommitMessage({ number: 7, title: "x".repeat(500) }, 12).title).toHaveLength(
      200 + " (#12)".length,
    );
    expect(mergeCommitMessage({ number: 7, title: "  " }, 12).title).toBe("Issue #7 (#12)");
  });
});

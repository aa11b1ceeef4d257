import { describe, expect, it } from "vitest";
import { type Mergeability, type StayCurrentAction, stayCurrent } from "../../src/domain/stay-current.ts";
import {
  refusedAsBehind,
  UP_TO_DATE_SETTINGS,
  type UpToDateRule,
  updateRequired,
} from "../../src/domain/up-to-date.ts";
import type { BranchProtection } from "../../src/forge/client/types.ts";

const rule = (upToDate: boolean | null): BranchProtection => ({
  requiredApprovals: upToDate === null ? null : 0,
  requiredChecks: [],
  upToDate,
  codeOwnerReview: false,
  dismissStale: false,
});

const PROTECTIONS: [string, BranchProtection | null][] = [
  ["no protection", null],
  ["protection not asking for it", rule(false)],
  ["protection asking for it", rule(true)],
  ["protection the token may not read", rule(null)],
];

/** Where `when_required` updates a head that is behind. */
const UPDATED_WHEN_REQUIRED = ["protection asking for it", "protection the token may not read"];

const STATES: Mergeability[] = [
  { kind: "current" },
  { kind: "behind" },
  { kind: "conflict", files: ["a.ts"] },
  { kind: "unknown" },
  { kind: "checking" },
];

const ruleOf = (setting: (typeof UP_TO_DATE_SETTINGS)[number], protection: BranchProtection | null) =>
  (setting === "always" ? { setting } : { setting, protection }) satisfies UpToDateRule;

describe("merge.upToDate × branch protection × mergeability", () => {
  const cases = UP_TO_DATE_SETTINGS.flatMap((setting) =>
    PROTECTIONS.flatMap(([name, protection]) =>
      STATES.map((state) => [setting, name, state.kind, ruleOf(setting, protection), state] as const),
    ),
  );

  it.each(cases)("%s, %s, %s", (setting, name, _kind, upToDate, state) => {
    const action = stayCurrent(state, 1, upToDate);
    // The setting decides only for a head that is behind, without conflict: everything else as always.
    if (state.kind !== "behind") {
      expect(action).toEqual(stayCurrent(state, 1));
      return;
    }
    const updates = setting === "always" || UPDATED_WHEN_REQUIRED.includes(name);
    expect(action).toEqual<StayCurrentAction>(updates ? { action: "update_branch" } : { action: "proceed" });
  });

  it("the default is always: a behind head is updated whatever the protection", () => {
    expect(stayCurrent({ kind: "behind" })).toEqual({ action: "update_branch" });
    for (const [, protection] of PROTECTIONS) expect(updateRequired(ruleOf("always", protection))).toBe(true);
  });

  it("when_required updates only where the rule asks for it, or may not be read", () => {
    expect(PROTECTIONS.map(([, p]) => updateRequired(ruleOf("when_required", p)))).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });

  it("a conflict is resolved, and Gitea's re-check read again, under when_required too", () => {
    const none = ruleOf("when_required", null);
    expect(stayCurrent({ kind: "conflict", files: ["a.ts"] }, 1, none)).toEqual({
      action: "resolve_conflict",
      files: ["a.ts"],
    });
    expect(stayCurrent({ kind: "checking" }, 1, none)).toEqual({ action: "read_again" });
  });
});

describe("refusedAsBehind", () => {
  it.each([
    ["not allowed to merge [reason: The head branch is behind the base branch]", true],
    ["Head branch is out of date. Review and try the merge again.", true],
    ["Repository rule violations found\n\nHead branch is out of date.", true],
    ["Head branch is not up to date with the base branch.", true],
    // The head moved from the pinned sha (someone's push), not the base.
    ["head out of date", false],
    ["Head branch was modified. Review and try the merge again.", false],
    ["Base branch was modified. Review and try the merge again.", false],
    ["not allowed to merge [reason: Does not have enough approvals]", false],
    ['Required status check "ci/test" is expected.', false],
    ["Please try again later", false],
  ])("%s → %s", (reason, behind) => {
    expect(refusedAsBehind(reason)).toBe(behind);
  });
});

import { describe, expect, it } from "vitest";
import {
  CHECKING_READS,
  giteaMergeability,
  githubMergeability,
  githubNeedsCompare,
  type Mergeability,
  type StayCurrentAction,
  stayCurrent,
} from "../../src/domain/stay-current.ts";

describe("stayCurrent", () => {
  it.each<[Mergeability, StayCurrentAction]>([
    [{ kind: "current" }, { action: "proceed" }],
    [{ kind: "unknown" }, { action: "ask_again" }],
    [{ kind: "behind" }, { action: "update_branch" }],
    [
      { kind: "conflict", files: ["src/a.ts"] },
      { action: "resolve_conflict", files: ["src/a.ts"] },
    ],
    [
      { kind: "conflict", files: [] },
      { action: "resolve_conflict", files: [] },
    ],
  ])("%j → %j", (state, action) => {
    expect(stayCurrent(state)).toEqual(action);
  });

  it("reads Gitea's `checking` again a few times, then takes it as a conflict", () => {
    for (let reads = 1; reads < CHECKING_READS; reads++)
      expect(stayCurrent({ kind: "checking" }, reads)).toEqual({ action: "read_again" });
    expect(stayCurrent({ kind: "checking" }, CHECKING_READS)).toEqual({
      action: "resolve_conflict",
      files: [],
    });
  });
});

describe("githubMergeability", () => {
  const STATES = ["behind", "dirty", "clean", "unstable", "blocked", "has_hooks", "draft", "unknown", null];
  const settled = (mergeable: boolean | null, state: string | null): Mergeability["kind"] | null => {
    if (state === "dirty" || mergeable === false) return "conflict";
    if (state === "behind") return "behind";
    if (mergeable === null || state === null || state === "unknown") return "unknown";
    return null;
  };
  const expected = (mergeable: boolean | null, state: string | null, behindBy: number | null) => {
    const kind = settled(mergeable, state);
    if (kind) return kind;
    if (behindBy === null) return "unknown";
    return behindBy > 0 ? "behind" : "current";
  };
  const cases = [true, false, null].flatMap((m) =>
    STATES.flatMap((s) => [null, 0, 3].map((behindBy) => [m, s, behindBy] as const)),
  );

  it.each(cases)("mergeable %s, mergeable_state %s, behind_by %s", (mergeable, state, behindBy) => {
    expect(githubMergeability(mergeable, state, behindBy).kind).toBe(expected(mergeable, state, behindBy));
    expect(githubNeedsCompare(mergeable, state)).toBe(settled(mergeable, state) === null);
  });

  it("the usual answers; clean without strict protection is compared with the base", () => {
    expect(githubMergeability(true, "behind", null)).toEqual({ kind: "behind" });
    expect(githubMergeability(false, "dirty", null)).toEqual({ kind: "conflict", files: [] });
    expect(githubMergeability(null, "unknown", null)).toEqual({ kind: "unknown" });
    expect(githubNeedsCompare(true, "clean")).toBe(true);
    // GitHub's `clean` (or `blocked`) of a head many commits behind an unprotected base: behind all the same.
    expect(githubMergeability(true, "clean", 12)).toEqual({ kind: "behind" });
    expect(githubMergeability(true, "blocked", 1)).toEqual({ kind: "behind" });
    expect(githubMergeability(true, "clean", 0)).toEqual({ kind: "current" });
    expect(githubMergeability(true, "unstable", 0)).toEqual({ kind: "current" });
  });
});

describe("giteaMergeability", () => {
  const pull = { mergeable: true, mergeBase: "b1", baseSha: "b1", conflictedFiles: [] as string[] };

  it.each<[string, Parameters<typeof giteaMergeability>[0], Mergeability]>([
    ["current", pull, { kind: "current" }],
    ["behind", { ...pull, baseSha: "b2" }, { kind: "behind" }],
    [
      "a conflict with its files",
      { ...pull, mergeable: false, conflictedFiles: ["a.txt"] },
      { kind: "conflict", files: ["a.txt"] },
    ],
    [
      "false while behind, naming no files: a conflict, or the re-check after the base moved",
      { ...pull, mergeable: false, baseSha: "b2" },
      { kind: "checking" },
    ],
    [
      "false with the base's head in the head: only the re-check (no conflict is possible)",
      { ...pull, mergeable: false },
      { kind: "unknown" },
    ],
    ["no merge base", { ...pull, mergeBase: null }, { kind: "unknown" }],
    ["no base head", { ...pull, baseSha: null }, { kind: "unknown" }],
  ])("%s", (_name, input, expected) => {
    expect(giteaMergeability(input)).toEqual(expected);
  });
});

import { describe, expect, it } from "vitest";
import {
  CHECKING_READS,
  giteaMergeability,
  githubMergeability,
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
  const expected = (mergeable: boolean | null, state: string | null): Mergeability["kind"] => {
    if (state === "dirty" || mergeable === false) return "conflict";
    if (state === "behind") return "behind";
    if (mergeable === null || state === null || state === "unknown") return "unknown";
    return "current";
  };
  const pairs = [true, false, null].flatMap((m) => STATES.map((s) => [m, s] as const));

  it.each(pairs)("mergeable %s, mergeable_state %s", (mergeable, state) => {
    expect(githubMergeability(mergeable, state).kind).toBe(expected(mergeable, state));
  });

  it("the usual answers", () => {
    expect(githubMergeability(true, "behind")).toEqual({ kind: "behind" });
    expect(githubMergeability(false, "dirty")).toEqual({ kind: "conflict", files: [] });
    expect(githubMergeability(true, "clean")).toEqual({ kind: "current" });
    expect(githubMergeability(true, "blocked")).toEqual({ kind: "current" });
    expect(githubMergeability(null, "unknown")).toEqual({ kind: "unknown" });
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

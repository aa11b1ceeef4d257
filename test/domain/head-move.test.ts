import { describe, expect, it } from "vitest";
import { headMove, mergedBaseCommit } from "../../src/domain/head-move.ts";

const HEAD = "a".repeat(40);
const MOVED = "b".repeat(40);
const BASE = "c".repeat(40);
const OLDER = "d".repeat(40);
const mismatch = (actual: string | null) => ({
  type: "head_mismatch",
  branch: "conveyor/7",
  claimed: HEAD,
  actual,
});

describe("mergedBaseCommit", () => {
  it.each<[string, string[], string | null]>([
    ["a merge of something into the head", [HEAD, BASE], BASE],
    ["a commit on the head", [HEAD], null],
    ["a merge of the head into something", [BASE, HEAD], null],
    ["an octopus merge", [HEAD, BASE, OLDER], null],
    ["a root commit", [], null],
    ["a rewrite", [OLDER], null],
  ])("%s", (_, parents, expected) => {
    expect(mergedBaseCommit(HEAD, parents)).toBe(expected);
  });
});

describe("headMove", () => {
  it("is null while the branch is at the head", () => {
    expect(headMove(7, { claimed: HEAD, actual: HEAD })).toBeNull();
  });

  it("a branch that is gone is a mismatch", () => {
    expect(headMove(7, { claimed: HEAD, actual: null })).toEqual(mismatch(null));
  });

  it.each<[string, string[]]>([
    ["the base's head", [BASE, OLDER]],
    ["a first parent back from the base's head", [OLDER, BASE]],
  ])("the head merged with %s is the update from the base", (_, baseHistory) => {
    expect(headMove(7, { claimed: HEAD, actual: MOVED, parents: [HEAD, BASE], baseHistory })).toEqual({
      type: "branch_updated",
      headSha: MOVED,
    });
  });

  it.each<[string, string[], string[] | undefined]>([
    ["a push on the head", [HEAD], [BASE]],
    ["a merge of a commit not on the base", [HEAD, OLDER], [BASE]],
    ["a merge whose first parent is not the head", [BASE, HEAD], [BASE, HEAD]],
    ["a merge with the base not read", [HEAD, BASE], undefined],
    ["a merge with the base's history not reaching it", [HEAD, BASE], []],
    ["a force-push elsewhere", [OLDER], [BASE, OLDER]],
  ])("%s is a mismatch", (_, parents, baseHistory) => {
    const move = { claimed: HEAD, actual: MOVED, parents, ...(baseHistory && { baseHistory }) };
    expect(headMove(7, move)).toEqual(mismatch(MOVED));
  });
});

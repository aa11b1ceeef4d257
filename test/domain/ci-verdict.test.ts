import { describe, expect, it } from "vitest";
import { combinedVerdict, contextMatcher } from "../../src/domain/ci-verdict.ts";
import type { CommitStatus } from "../../src/forge/client/types.ts";

const status = (
  context: string,
  state: CommitStatus["state"],
  extra: Partial<CommitStatus> = {},
): CommitStatus => ({
  context,
  state,
  targetUrl: null,
  description: null,
  ...extra,
});

describe("contextMatcher", () => {
  it.each([
    ["*", "ci/woodpecker/pr/test", true],
    ["ci/woodpecker/*", "ci/woodpecker/pr/test", true],
    ["ci/woodpecker/*", "ci/drone", false],
    ["test (ubuntu)", "test (ubuntu)", true],
    ["test (ubuntu)", "test (macos)", false],
    ["a.b", "axb", false],
  ])("%s matches %s: %s", (pattern, context, expected) => {
    expect(contextMatcher(pattern)(context)).toBe(expected);
  });
});

describe("combinedVerdict", () => {
  it("is pending with no status yet, or while any counted context runs", () => {
    expect(combinedVerdict([], "*")).toEqual({ kind: "pending" });
    expect(combinedVerdict([status("a", "success"), status("b", "pending")], "*")).toEqual({
      kind: "pending",
    });
  });

  it("is green when every counted context succeeded", () => {
    expect(combinedVerdict([status("ci/a", "success"), status("ci/b", "success")], "*")).toEqual({
      kind: "green",
    });
  });

  it("is red as soon as one counted context fails, with each failure described", () => {
    const verdict = combinedVerdict(
      [
        status("ci/woodpecker/pr/test", "failure", {
          description: "2 tests failed",
          targetUrl: "http://ci/1",
        }),
        status("ci/woodpecker/pr/lint", "pending"),
        status("ci/woodpecker/pr/build", "error"),
      ],
      "ci/woodpecker/*",
    );
    expect(verdict).toEqual({
      kind: "red",
      excerpt: "ci/woodpecker/pr/test: failure — 2 tests failed (http://ci/1)\nci/woodpecker/pr/build: error",
      targetUrls: ["http://ci/1", null],
    });
  });

  it("ignores contexts outside the pattern", () => {
    expect(combinedVerdict([status("ci/test", "success"), status("codecov", "failure")], "ci/*")).toEqual({
      kind: "green",
    });
    expect(combinedVerdict([status("codecov", "success")], "ci/*")).toEqual({ kind: "pending" });
  });

  it("counts the newest status of a context only", () => {
    expect(combinedVerdict([status("ci", "success"), status("ci", "failure")], "*")).toEqual({
      kind: "green",
    });
  });
});

import { describe, expect, it } from "vitest";
import {
  ciVerdict,
  clip,
  contextMatcher,
  MAX_CHECK_TEXT_CHARS,
  MAX_DESCRIPTION_CHARS,
  MAX_FAILED_CHECKS,
  MAX_VERDICT_EXCERPT_CHARS,
  type RequiredChecks,
} from "../../src/domain/ci-verdict.ts";
import type { CheckRun, CheckSuite, CiReport, CommitStatus } from "../../src/forge/client/types.ts";

const status = (
  context: string,
  state: CommitStatus["state"],
  extra: Partial<CommitStatus> = {},
): CommitStatus => ({ context, state, targetUrl: null, description: null, ...extra });

let nextId = 1;
const run = (name: string, status: string, conclusion: string | null, extra: Partial<CheckRun> = {}) =>
  ({
    id: nextId++,
    name,
    status,
    conclusion,
    suiteId: 1,
    detailsUrl: null,
    summary: null,
    ...extra,
  }) satisfies CheckRun;

const suite = (app: string, status: string, conclusion: string | null, id = nextId++): CheckSuite => ({
  id,
  app,
  status,
  conclusion,
});

const report = (parts: Partial<CiReport>): CiReport => ({
  statuses: [],
  checkRuns: [],
  checkSuites: [],
  ...parts,
});

const ALL: RequiredChecks = { pattern: "*", names: [] };
const verdictOf = (parts: Partial<CiReport>, required: RequiredChecks = ALL) =>
  ciVerdict(report(parts), required).kind;

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

describe("ciVerdict over commit statuses", () => {
  it("is pending with nothing reported, or while any counted context runs", () => {
    expect(verdictOf({})).toBe("pending");
    expect(verdictOf({ statuses: [status("a", "success"), status("b", "pending")] })).toBe("pending");
  });

  it("is green when every counted context succeeded", () => {
    expect(verdictOf({ statuses: [status("ci/a", "success"), status("ci/b", "success")] })).toBe("green");
  });

  it("is red as soon as one counted context fails, with each failure described", () => {
    const verdict = ciVerdict(
      report({
        statuses: [
          status("ci/woodpecker/pr/test", "failure", {
            description: "2 tests failed",
            targetUrl: "http://ci/1",
          }),
          status("ci/woodpecker/pr/lint", "pending"),
          status("ci/woodpecker/pr/build", "error"),
        ],
      }),
      { pattern: "ci/woodpecker/*", names: [] },
    );
    expect(verdict).toEqual({
      kind: "red",
      excerpt: "ci/woodpecker/pr/test: failure — 2 tests failed (http://ci/1)\nci/woodpecker/pr/build: error",
      failing: [
        {
          name: "ci/woodpecker/pr/test",
          outcome: "failure",
          description: "2 tests failed",
          url: "http://ci/1",
        },
        { name: "ci/woodpecker/pr/build", outcome: "error" },
      ],
      failed: [
        { check: expect.objectContaining({ name: "ci/woodpecker/pr/test" }), origin: { kind: "status" } },
        { check: { name: "ci/woodpecker/pr/build", outcome: "error" }, origin: { kind: "status" } },
      ],
    });
  });

  it("links a failing check only to a web page", () => {
    const verdict = ciVerdict(
      report({ statuses: [status("ci/x", "failure", { targetUrl: "javascript:alert(1)" })] }),
      ALL,
    );
    expect(verdict).toMatchObject({ failing: [{ name: "ci/x", outcome: "failure" }] });
    expect(verdict.kind === "red" && verdict.failing[0]).not.toHaveProperty("url");
  });

  it("ignores contexts outside the pattern", () => {
    const ciOnly = { pattern: "ci/*", names: [] };
    expect(
      verdictOf({ statuses: [status("ci/test", "success"), status("codecov", "failure")] }, ciOnly),
    ).toBe("green");
    expect(verdictOf({ statuses: [status("codecov", "success")] }, ciOnly)).toBe("pending");
  });

  it("counts the newest status of a context only (forges list newest first)", () => {
    expect(verdictOf({ statuses: [status("ci", "success"), status("ci", "failure")] })).toBe("green");
    expect(verdictOf({ statuses: [status("ci", "failure"), status("ci", "success")] })).toBe("red");
  });
});

describe("ciVerdict over check runs and suites", () => {
  it("one green suite is not all of CI: a second suite still running keeps it pending", () => {
    expect(
      verdictOf({
        checkSuites: [
          suite("github-actions", "completed", "success"),
          suite("circleci", "in_progress", null),
        ],
      }),
    ).toBe("pending");
  });

  it("a queued suite with no runs yet holds the verdict", () => {
    expect(
      verdictOf({
        checkRuns: [run("build", "completed", "success")],
        checkSuites: [
          suite("github-actions", "completed", "success"),
          suite("github-actions", "queued", null),
        ],
      }),
    ).toBe("pending");
  });

  it("is green when every run and suite completed green", () => {
    expect(
      verdictOf({
        checkRuns: [run("build", "completed", "success"), run("lint", "completed", "success")],
        checkSuites: [
          suite("github-actions", "completed", "success"),
          suite("circleci", "completed", "success"),
        ],
      }),
    ).toBe("green");
  });

  it.each(["success", "neutral", "skipped"])("conclusion %s passes", (conclusion) => {
    expect(verdictOf({ checkRuns: [run("build", "completed", conclusion)] })).toBe("green");
  });

  it.each([
    "failure",
    "cancelled",
    "timed_out",
    "action_required",
    "stale",
    "startup_failure",
    "something_new",
  ])("conclusion %s fails", (conclusion) => {
    expect(verdictOf({ checkRuns: [run("build", "completed", conclusion)] })).toBe("red");
  });

  it("a completed check without a conclusion fails closed", () => {
    expect(verdictOf({ checkSuites: [suite("app", "completed", null)] })).toBe("red");
  });

  it.each(["queued", "in_progress", "waiting", "requested", "pending"])("status %s still runs", (s) => {
    expect(verdictOf({ checkRuns: [run("build", s, null)] })).toBe("pending");
  });

  it("is red on a failing run while others still run, with the run's summary and link", () => {
    const verdict = ciVerdict(
      report({
        checkRuns: [
          run("test", "completed", "failure", { summary: "3 failed", detailsUrl: "https://ci/run/9" }),
          run("lint", "in_progress", null),
        ],
        checkSuites: [suite("github-actions", "in_progress", null)],
      }),
      ALL,
    );
    expect(verdict).toEqual({
      kind: "red",
      excerpt: "test: failure — 3 failed (https://ci/run/9)",
      failing: [{ name: "test", outcome: "failure", description: "3 failed", url: "https://ci/run/9" }],
      failed: [
        {
          check: { name: "test", outcome: "failure", description: "3 failed", url: "https://ci/run/9" },
          origin: { kind: "run", suiteId: 1 },
        },
      ],
    });
  });

  it("cuts a long run summary", () => {
    const verdict = ciVerdict(
      report({ checkRuns: [run("t", "completed", "failure", { summary: "x".repeat(5_000) })] }),
      ALL,
    );
    expect(verdict).toMatchObject({ excerpt: `t: failure — ${"x".repeat(MAX_DESCRIPTION_CHARS)}` });
  });

  it("bounds the whole excerpt, however many checks fail with long outputs (200 kB here)", () => {
    const runs = Array.from({ length: 100 }, (_, i) =>
      run(`check-${i}`, "completed", "failure", { summary: "y".repeat(2_000), suiteId: i }),
    );
    const verdict = ciVerdict(report({ checkRuns: runs }), ALL);
    if (verdict.kind !== "red") throw new Error("not red");
    expect(verdict.excerpt.length).toBeLessThanOrEqual(MAX_VERDICT_EXCERPT_CHARS);
    expect(verdict.excerpt.startsWith("check-0: failure — y")).toBe(true);
    expect(verdict.excerpt).toMatch(/\[… \d+ characters cut\]$/);
    // The checks a human sees on the page: the first few, each cut short.
    expect(verdict.failing).toHaveLength(MAX_FAILED_CHECKS);
    expect(verdict.failing[0]?.description).toHaveLength(MAX_CHECK_TEXT_CHARS);
  });

  it.each([
    ["start", "abcdefghij".repeat(10), 40],
    ["end", "abcdefghij".repeat(10), 40],
    ["start", "short", 40],
  ] as const)("clip keeps the %s within the limit and says what it cut", (keep, text, max) => {
    const clipped = clip(text, max, keep);
    expect(clipped.length).toBeLessThanOrEqual(max);
    if (text.length <= max) return expect(clipped).toBe(text);
    const kept = clipped.replace(/\[… \d+ characters cut\]/, "").replace("\n", "");
    const cut = Number(/(\d+) characters cut/.exec(clipped)?.[1]);
    expect(kept.length + cut).toBe(text.length);
    expect(keep === "start" ? text.startsWith(kept) : text.endsWith(kept)).toBe(true);
  });

  it("counts the newest run of a name within its suite, and same-named runs of other suites apart", () => {
    const old = run("build", "completed", "failure", { id: 10 });
    const rerun = run("build", "completed", "success", { id: 11 });
    expect(verdictOf({ checkRuns: [rerun, old] })).toBe("green");
    const otherSuite = run("build", "completed", "failure", { id: 5, suiteId: 2 });
    expect(verdictOf({ checkRuns: [rerun, old, otherSuite] })).toBe("red");
  });

  it("applies the pattern to check run and suite names too", () => {
    const required = { pattern: "test*", names: [] };
    expect(
      verdictOf(
        {
          checkRuns: [
            run("test (ubuntu)", "completed", "success"),
            run("deploy-preview", "completed", "failure"),
          ],
          checkSuites: [suite("github-actions", "completed", "failure")],
        },
        required,
      ),
    ).toBe("green");
  });

  it("mixes statuses with checks: all of them count", () => {
    expect(
      verdictOf({
        statuses: [status("ci/ext", "pending")],
        checkRuns: [run("build", "completed", "success")],
      }),
    ).toBe("pending");
    expect(
      verdictOf({
        statuses: [status("ci/ext", "success")],
        checkRuns: [run("build", "completed", "success")],
      }),
    ).toBe("green");
  });
});

describe("ciVerdict with named required checks", () => {
  const required = { pattern: "*", names: ["test", "ci/lint"] };

  it("waits until every named check is reported, ignoring others", () => {
    expect(verdictOf({ checkRuns: [run("test", "completed", "success")] }, required)).toBe("pending");
    expect(
      verdictOf(
        {
          checkRuns: [run("test", "completed", "success"), run("docs", "completed", "failure")],
          statuses: [status("ci/lint", "success")],
          checkSuites: [suite("circleci", "in_progress", null)],
        },
        required,
      ),
    ).toBe("green");
  });

  it("is red when a named check fails, even before the others report", () => {
    expect(verdictOf({ statuses: [status("ci/lint", "failure")] }, required)).toBe("red");
  });

  it("names take the place of the pattern", () => {
    expect(
      verdictOf(
        { statuses: [status("ci/lint", "success")], checkRuns: [run("test", "completed", "success")] },
        { pattern: "nothing-matches", names: ["test", "ci/lint"] },
      ),
    ).toBe("green");
  });
});

describe("ciVerdict with the checks branch protection requires", () => {
  const own = { pattern: "ci/woodpecker/*", names: [] };

  it("a protected check outside the project's own pattern gates the verdict: reported, and green", () => {
    const green = status("ci/woodpecker/pr/test", "success");
    const required = { ...own, protected: ["security/scan"] };
    expect(verdictOf({ statuses: [green] }, own)).toBe("green");
    expect(verdictOf({ statuses: [green] }, required)).toBe("pending");
    expect(verdictOf({ statuses: [green, status("security/scan", "pending")] }, required)).toBe("pending");
    expect(verdictOf({ statuses: [green, status("security/scan", "failure")] }, required)).toBe("red");
    expect(verdictOf({ statuses: [green, status("security/scan", "success")] }, required)).toBe("green");
  });

  it("takes Gitea's globs, and adds to named checks too", () => {
    const required = { pattern: "*", names: ["test"], protected: ["lint/*"] };
    const test = run("test", "completed", "success");
    expect(verdictOf({ checkRuns: [test] }, required)).toBe("pending");
    expect(verdictOf({ checkRuns: [test, run("lint/style", "completed", "success")] }, required)).toBe(
      "green",
    );
    expect(verdictOf({ checkRuns: [test, run("lint/types", "completed", "failure")] }, required)).toBe("red");
  });

  it("without CI of its own (a pattern nothing is named), protection's checks are all that count", () => {
    const required = { pattern: "", names: [], protected: ["build"] };
    expect(verdictOf({ statuses: [status("other", "failure")] }, required)).toBe("pending");
    expect(verdictOf({ statuses: [status("other", "failure"), status("build", "success")] }, required)).toBe(
      "green",
    );
  });
});

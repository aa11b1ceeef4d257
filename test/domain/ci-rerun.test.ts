import { describe, expect, it } from "vitest";
import {
  type CiRerun,
  INFRA_CAUSES,
  infraCause,
  planRerun,
  type RerunApis,
  reportIdentity,
  rerunApis,
  rerunDecision,
  rerunRecords,
  woodpeckerPipeline,
} from "../../src/domain/ci-rerun.ts";
import { ciVerdict, type FailedCheck, type FailingCheck } from "../../src/domain/ci-verdict.ts";
import {
  DEFAULT_LIMITS,
  INITIAL_CONTEXT,
  type IssueContext,
  type LifecycleEvent,
  transition,
} from "../../src/domain/lifecycle.ts";
import type { CheckSuite, CiReport } from "../../src/forge/client/types.ts";

const WP = "https://ci.example.org";
const status = (
  outcome: string,
  description?: string,
  url = `${WP}/repos/7/pipeline/42/1`,
): FailingCheck => ({
  check: { name: "ci/woodpecker/pr/test", outcome, ...(description && { description }), url },
  origin: { kind: "status" },
});
const run = (outcome: string, suiteId: number | null = 5, name = "test"): FailingCheck => ({
  check: { name, outcome },
  origin: { kind: "run", suiteId },
});
const suite = (outcome: string, id = 5): FailingCheck => ({
  check: { name: "github-actions", outcome },
  origin: { kind: "suite", id },
});
const NONE = new Set<string>();
const APIS: RerunApis = { woodpecker: WP, actionsSuites: new Set([5]) };

describe("infraCause: why a failing check failed, when not for the change's sake", () => {
  it.each([
    ["cancelled", "cancelled"],
    ["timed_out", "timed_out"],
    ["startup_failure", "startup_failure"],
    ["stale", "stale"],
    ["failure", null],
    ["action_required", null],
    ["neutral_new_conclusion", null],
  ])("a check run concluded %s: %s", (conclusion, cause) => {
    expect(infraCause(run(conclusion), NONE)).toBe(cause);
    expect(infraCause(suite(conclusion), NONE)).toBe(cause);
  });

  it.each([
    ["error", undefined, "ci_error"],
    ["failure", "Pipeline was canceled", "cancelled"],
    ["failure", "  the build was KILLED ", "cancelled"],
    ["failure", "Has been cancelled", "cancelled"],
    ["failure", "Pipeline failed", null],
    ["failure", "2 tests failed; pipeline was canceled by a test", null],
    ["failure", undefined, null],
  ])("a status %s (%s): %s", (state, description, cause) => {
    expect(infraCause(status(state, description), NONE)).toBe(cause);
  });

  it("a plain failure of a check that passed on a re-run lately is flaky; another failure is not", () => {
    const flaky = new Set(["ci/woodpecker/pr/test", "test"]);
    expect(infraCause(status("failure"), flaky)).toBe("flaky");
    expect(infraCause(run("failure"), flaky)).toBe("flaky");
    expect(infraCause(run("failure", 5, "lint"), flaky)).toBeNull();
    // What it concluded says more than its history.
    expect(infraCause(run("timed_out"), flaky)).toBe("timed_out");
    expect(infraCause(run("action_required"), flaky)).toBeNull();
  });

  it("every cause has words for the CI table", async () => {
    const { CAUSE_TEXT } = await import("../../src/domain/ci-rerun.ts");
    for (const cause of INFRA_CAUSES) expect(CAUSE_TEXT[cause]).toMatch(/\w/);
  });
});

describe("woodpeckerPipeline: the pipeline a status links to", () => {
  it.each([
    [`${WP}/repos/7/pipeline/42`, { repoId: 7, number: 42 }],
    [`${WP}/repos/7/pipeline/42/1`, { repoId: 7, number: 42 }],
    [`${WP}/repos/7/pipeline/42?x=1`, { repoId: 7, number: 42 }],
    [`${WP}/repos/7/pipeline/42abc`, null],
    [`${WP}/x/repos/7/pipeline/42`, null],
    ["https://evil.example/repos/7/pipeline/42", null],
    [`${WP}.evil.example/repos/7/pipeline/42`, null],
    [null, null],
  ])("%s: %o", (url, expected) => {
    expect(woodpeckerPipeline(`${WP}/`, url)).toEqual(expected);
  });
});

describe("planRerun: re-run only when every failing check is the infrastructure's and can be re-run", () => {
  it("restarts the Woodpecker pipeline a cancelled status links to, once however many of its checks", () => {
    const other = status("error", undefined, `${WP}/repos/7/pipeline/42/2`);
    expect(planRerun([status("failure", "Pipeline was canceled"), other], APIS, NONE)).toEqual({
      causes: ["cancelled", "ci_error"],
      targets: [{ ci: "woodpecker", repoId: 7, pipeline: 42 }],
    });
  });

  it("re-runs a GitHub Actions suite's failed jobs, by run or by suite", () => {
    expect(planRerun([run("cancelled"), suite("timed_out")], APIS, NONE).targets).toEqual([
      { ci: "github-actions", suiteId: 5 },
    ]);
  });

  it("re-runs nothing when one failing check is the change's", () => {
    const plan = planRerun([run("cancelled"), run("failure", 5, "lint")], APIS, NONE);
    expect(plan).toEqual({ causes: ["cancelled", null], targets: [] });
  });

  it("re-runs nothing its CI cannot re-run: another app's suite, a run without a suite, no Woodpecker", () => {
    expect(planRerun([run("cancelled", 9)], APIS, NONE).targets).toEqual([]);
    expect(planRerun([run("cancelled", null)], APIS, NONE).targets).toEqual([]);
    const noServer = { woodpecker: null, actionsSuites: new Set<number>() };
    expect(planRerun([status("error")], noServer, NONE)).toEqual({ causes: ["ci_error"], targets: [] });
    const elsewhere = status("error", undefined, "https://other.example/repos/7/pipeline/42");
    expect(planRerun([elsewhere], APIS, NONE).targets).toEqual([]);
  });

  it("waits for a GitHub Actions run that still runs: GitHub re-runs a finished run's jobs only", () => {
    const running = { ...APIS, running: new Set([5]) };
    expect(planRerun([run("cancelled")], running, NONE)).toEqual({
      causes: ["cancelled"],
      targets: [],
      wait: true,
    });
    // A red result the change caused does not wait.
    expect(planRerun([run("cancelled"), run("failure", 5, "lint")], running, NONE)).toEqual({
      causes: ["cancelled", null],
      targets: [],
    });
  });

  it("re-runs nothing for no failing check", () => {
    expect(planRerun([], APIS, NONE)).toEqual({ causes: [], targets: [] });
  });
});

describe("rerunApis", () => {
  const report: CiReport = {
    statuses: [],
    checkRuns: [],
    checkSuites: [
      { id: 5, app: "github-actions", status: "completed", conclusion: "cancelled" },
      { id: 6, app: "circleci-checks", status: "completed", conclusion: "cancelled" },
    ],
  };
  it("knows GitHub Actions' suites on GitHub only", () => {
    expect(rerunApis(report, { github: true, woodpecker: null }).actionsSuites).toEqual(new Set([5]));
    const running = {
      ...report,
      checkSuites: [{ ...report.checkSuites[0], status: "in_progress" } as CheckSuite],
    };
    expect(rerunApis(running, { github: true, woodpecker: null }).running).toEqual(new Set([5]));
    expect(rerunApis(report, { github: false, woodpecker: WP })).toEqual({
      woodpecker: WP,
      actionsSuites: new Set(),
      running: new Set(),
    });
  });
});

describe("reportIdentity: a re-run changes it, reading again does not", () => {
  const base: CiReport = {
    statuses: [
      { context: "a", state: "failure", targetUrl: `${WP}/repos/7/pipeline/42`, description: "x" },
      { context: "b", state: "success", targetUrl: null, description: null },
    ],
    checkRuns: [
      {
        id: 1,
        name: "t",
        status: "completed",
        conclusion: "cancelled",
        suiteId: 5,
        detailsUrl: null,
        summary: null,
      },
    ],
    checkSuites: [{ id: 5, app: "github-actions", status: "completed", conclusion: "cancelled" }],
  };
  it("is the same in any order and differs with a new pipeline or run", () => {
    const reordered = { ...base, statuses: [...base.statuses].reverse() };
    expect(reportIdentity(reordered)).toBe(reportIdentity(base));
    const restarted = {
      ...base,
      statuses: [
        { ...base.statuses[0], targetUrl: `${WP}/repos/7/pipeline/43` } as (typeof base.statuses)[0],
      ],
    };
    expect(reportIdentity(restarted)).not.toBe(reportIdentity(base));
    const rerunJob = {
      ...base,
      checkRuns: [
        { ...base.checkRuns[0], id: 2, status: "queued", conclusion: null } as (typeof base.checkRuns)[0],
      ],
    };
    expect(reportIdentity(rerunJob)).not.toBe(reportIdentity(base));
  });
});

const cancelled: FailedCheck = { name: "test", outcome: "cancelled", cause: "cancelled" };
type CiEvent = Extract<LifecycleEvent, { type: "ci" }>;
const red = (fingerprint: string, extra: Partial<CiEvent> = {}): CiEvent => ({
  type: "ci",
  result: "red",
  headSha: "s1",
  checks: [cancelled],
  fingerprint,
  rerun: [{ ci: "github-actions", suiteId: 5 }],
  ...extra,
});
const green: CiEvent = { type: "ci", result: "green", headSha: "s1" };

describe("rerunDecision", () => {
  const first: CiRerun = { headSha: "s1", count: 1, fingerprint: "f1", checks: ["test"] };

  it("re-runs an infrastructure red up to the allowed times per head", () => {
    const decision = rerunDecision(null, red("f1"), 1);
    expect(decision).toEqual({
      kind: "rerun",
      next: first,
      reason: "CI re-run 1 of 1, no fix session spent: test cancelled",
      targets: [{ ci: "github-actions", suiteId: 5 }],
    });
    expect(rerunDecision(first, red("f2"), 1)).toEqual({ kind: "result" });
    expect(rerunDecision(first, red("f2"), 2)).toMatchObject({
      kind: "rerun",
      next: { count: 2, fingerprint: "f2" },
    });
    expect(rerunDecision(null, red("f1"), 0)).toEqual({ kind: "result" });
  });

  it("counts re-runs per head: a new head starts again", () => {
    expect(rerunDecision(first, red("f9", { headSha: "s2" }), 1)).toMatchObject({
      kind: "rerun",
      next: { headSha: "s2", count: 1 },
    });
  });

  it("the red result already re-run, read again, is stale; green and refused re-runs are results", () => {
    expect(rerunDecision(first, red("f1"), 5).kind).toBe("stale");
    expect(rerunDecision(first, red("f1", { rerunRefused: "403" }), 5)).toEqual({ kind: "result" });
    expect(rerunDecision(first, green, 5)).toEqual({
      kind: "result",
    });
  });

  it("a red the change caused, or one without what identifies it, is a result", () => {
    expect(rerunDecision(null, red("f1", { rerun: undefined }), 1)).toEqual({ kind: "result" });
    expect(rerunDecision(null, red("f1", { fingerprint: undefined }), 1)).toEqual({ kind: "result" });
  });
});

describe("rerunRecords: what D1 keeps of re-runs", () => {
  const asked: CiRerun = { headSha: "s1", count: 1, fingerprint: "f1", checks: ["test", "lint"] };

  it("a new re-run's checks with their causes, no result yet", () => {
    expect(rerunRecords(null, asked, red("f1"))).toEqual([
      { headSha: "s1", round: 1, check: "test", cause: "cancelled", result: null },
      { headSha: "s1", round: 1, check: "lint", cause: null, result: null },
    ]);
  });

  it("the re-run's result: a check that failed again, one that passed (flipped)", () => {
    const again = red("f2", { checks: [{ name: "lint", outcome: "failure" }] });
    expect(rerunRecords(asked, asked, again)).toEqual([
      { headSha: "s1", round: 1, check: "test", cause: null, result: "passed" },
      { headSha: "s1", round: 1, check: "lint", cause: null, result: "failed" },
    ]);
    expect(rerunRecords(asked, null, green).map((r) => r.result)).toEqual(["passed", "passed"]);
  });

  it("nothing of a refused re-run, or of another head's", () => {
    expect(rerunRecords(asked, asked, red("f1", { rerunRefused: "403" }))).toEqual([]);
    expect(rerunRecords(asked, null, red("f3", { headSha: "s2" }))).toEqual([]);
  });
});

describe("the lifecycle's awaiting_ci × ci with re-runs", () => {
  const waiting = (patch: Partial<IssueContext> = {}): IssueContext => ({
    ...INITIAL_CONTEXT,
    state: "awaiting_ci",
    iteration: 1,
    sessionId: "sess-1",
    branch: "conveyor/7",
    headSha: "s1",
    prOpened: true,
    ...patch,
  });

  it("stays in awaiting_ci, re-runs and watches for the re-run's result, spending no CI fix", () => {
    const outcome = transition(waiting(), red("f1"), DEFAULT_LIMITS);
    expect(outcome).toMatchObject({
      ok: true,
      next: { state: "awaiting_ci", ciFixes: 0, ciRerun: { count: 1, fingerprint: "f1" } },
      effects: [
        { kind: "rerun_ci", targets: [{ ci: "github-actions", suiteId: 5 }], of: "f1" },
        { kind: "watch_ci", after: "f1" },
      ],
    });
  });

  it("the re-run's red goes to a fix session; the same red read again is rejected as stale", () => {
    const rerunning = waiting({ ciRerun: { headSha: "s1", count: 1, fingerprint: "f1", checks: ["test"] } });
    expect(transition(rerunning, red("f2"), DEFAULT_LIMITS)).toMatchObject({
      ok: true,
      next: { state: "revising", ciFixes: 1 },
    });
    expect(transition(rerunning, red("f1"), DEFAULT_LIMITS)).toMatchObject({ ok: false });
  });

  it("a red result whose re-run the CI refused goes to a fix session, saying why", () => {
    const rerunning = waiting({ ciRerun: { headSha: "s1", count: 1, fingerprint: "f1", checks: ["test"] } });
    const refused = red("f1", { rerunRefused: "the CI refused the re-run: 403" });
    expect(transition(rerunning, refused, DEFAULT_LIMITS)).toMatchObject({
      ok: true,
      next: { state: "revising", ciFixes: 1, reason: "the CI refused the re-run: 403" },
    });
  });

  it("ci.reruns 0 never re-runs", () => {
    const outcome = transition(waiting(), red("f1"), { ...DEFAULT_LIMITS, ciReruns: 0 });
    expect(outcome).toMatchObject({ ok: true, next: { state: "revising" } });
  });

  it("a session's new wait for CI starts with no re-run", () => {
    const revising = waiting({
      state: "revising",
      ciRerun: { headSha: "s1", count: 1, fingerprint: "f1", checks: ["test"] },
    });
    const next = transition(revising, { type: "phase", phase: "awaiting_ci", headSha: "s2" }, DEFAULT_LIMITS);
    expect(next).toMatchObject({ ok: true, next: { state: "awaiting_ci", ciRerun: null } });
  });
});

it("ciVerdict gives every failing check's origin, for its re-run", () => {
  const verdict = ciVerdict(
    {
      statuses: [],
      checkRuns: [],
      checkSuites: [{ id: 5, app: "github-actions", status: "completed", conclusion: "cancelled" }],
    },
    { pattern: "*", names: [] },
  );
  expect(verdict.kind === "red" && verdict.failed.map((f) => f.origin)).toEqual([{ kind: "suite", id: 5 }]);
});

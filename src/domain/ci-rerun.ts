/**
 * Red CI that the change did not cause: which failing checks failed for the infrastructure's sake (cancelled,
 * timed out, never started, the CI's own error, or a check known to pass when run again), whether the CI can
 * run them again, and what a re-run's result says of them afterwards. A red result is re-run only when every
 * failing check is such a one and its CI can re-run it; anything else is the change's, for a fix session.
 * Pure: the Worker reads the forge (src/ci/gate.ts), the lifecycle table decides how often
 * (src/domain/lifecycle.ts, `ci.reruns`).
 */
import type { CheckSuite, CiReport } from "../forge/client/types.ts";
import type { FailedCheck, FailingCheck } from "./ci-verdict.ts";

export const INFRA_CAUSES = [
  "cancelled",
  "timed_out",
  "startup_failure",
  "stale",
  "ci_error",
  "flaky",
] as const;
export type InfraCause = (typeof INFRA_CAUSES)[number];

/** What each cause means, for the timeline and its CI table. */
export const CAUSE_TEXT: Record<InfraCause, string> = {
  cancelled: "cancelled",
  timed_out: "timed out",
  startup_failure: "never started",
  stale: "gone stale",
  ci_error: "the CI's own error",
  flaky: "known to pass on re-run",
};

/** Check run and suite conclusions (GitHub's checks API) that say nothing about the change. */
const INFRA_CONCLUSIONS: Partial<Record<string, InfraCause>> = {
  cancelled: "cancelled",
  timed_out: "timed_out",
  startup_failure: "startup_failure",
  stale: "stale",
};

/**
 * What CIs write on a commit status when they cancel a run, which is otherwise a plain `failure`: Woodpecker
 * (`server/forge/common/status.go`, and its older `the build was killed`), Gitea's and Forgejo's Actions
 * (`services/actions/commit_status.go`).
 */
const CANCELLED_STATUS_TEXTS = new Set([
  "pipeline was canceled",
  "the build was killed",
  "the build canceled",
  "has been cancelled",
]);

/**
 * Why `failing` failed, when it was not the change: its conclusion, a status's `error` (the CI could not run
 * it, where `failure` is what it found), a cancelling CI's words, or a plain failure of a check that `flaky`
 * names (one that passed on a re-run lately). Null: the change may be at fault.
 */
export function infraCause({ check, origin }: FailingCheck, flaky: ReadonlySet<string>): InfraCause | null {
  const outcome = check.outcome.toLowerCase();
  if (origin.kind === "status") {
    if (outcome === "error") return "ci_error";
    const text = check.description?.trim().toLowerCase() ?? "";
    if (CANCELLED_STATUS_TEXTS.has(text)) return "cancelled";
  } else {
    const cause = INFRA_CONCLUSIONS[outcome];
    if (cause) return cause;
  }
  return outcome === "failure" && flaky.has(check.name) ? "flaky" : null;
}

/** A re-run through a CI's API: a Woodpecker pipeline's restart, or a GitHub Actions run's failed jobs. */
export type RerunTarget =
  | { ci: "woodpecker"; repoId: number; pipeline: number }
  | { ci: "github-actions"; suiteId: number };

/**
 * What can re-run a project's checks: its Woodpecker server (given with a token), and on GitHub the commit's
 * check suites of GitHub Actions (the app `github-actions`), whose workflow runs re-run their failed jobs.
 */
export type RerunApis = {
  woodpecker: string | null;
  actionsSuites: ReadonlySet<number>;
  /** Those of `actionsSuites` whose workflow run still runs: GitHub re-runs only a finished run's jobs. */
  running?: ReadonlySet<number>;
};

export const GITHUB_ACTIONS_APP = "github-actions";

export function rerunApis(report: CiReport, on: { github: boolean; woodpecker: string | null }): RerunApis {
  const actions = (suite: CheckSuite) => on.github && suite.app === GITHUB_ACTIONS_APP;
  const suites = report.checkSuites.filter(actions);
  return {
    woodpecker: on.woodpecker,
    actionsSuites: new Set(suites.map((suite) => suite.id)),
    running: new Set(suites.filter((suite) => suite.status !== "completed").map((suite) => suite.id)),
  };
}

/** The pipeline a Woodpecker status links to: `<server>/repos/<repo_id>/pipeline/<number>[/<workflow>]`. */
export function woodpeckerPipeline(
  server: string,
  url: string | null | undefined,
): { repoId: number; number: number } | null {
  const base = server.replace(/\/+$/, "");
  if (!url?.startsWith(`${base}/`)) return null;
  const match = /^\/repos\/(\d+)\/pipeline\/(\d+)(?:[/?#]|$)/.exec(url.slice(base.length));
  return match ? { repoId: Number(match[1]), number: Number(match[2]) } : null;
}

function targetOf({ check, origin }: FailingCheck, apis: RerunApis): RerunTarget | null {
  if (origin.kind === "status") {
    const pipeline = apis.woodpecker && woodpeckerPipeline(apis.woodpecker, check.url);
    return pipeline ? { ci: "woodpecker", repoId: pipeline.repoId, pipeline: pipeline.number } : null;
  }
  const suiteId = origin.kind === "run" ? origin.suiteId : origin.id;
  return suiteId !== null && apis.actionsSuites.has(suiteId) ? { ci: "github-actions", suiteId } : null;
}

export type RerunPlan = {
  /** Each failing check's cause, in order (null: the change may be at fault). */
  causes: (InfraCause | null)[];
  /** What to re-run; empty when any failing check is the change's, or cannot be re-run. */
  targets: RerunTarget[];
  /** A re-run is due, but a workflow run it needs still runs: the result is not final until it ends. */
  wait?: true;
};

export function planRerun(
  failed: readonly FailingCheck[],
  apis: RerunApis,
  flaky: ReadonlySet<string>,
): RerunPlan {
  const causes = failed.map((f) => infraCause(f, flaky));
  const targets = failed.map((f) => targetOf(f, apis));
  const every = failed.length > 0 && causes.every((c) => c !== null) && targets.every((t) => t !== null);
  if (!every) return { causes, targets: [] };
  const unique = [...new Map(targets.map((t) => [JSON.stringify(t), t as RerunTarget])).values()];
  const running = unique.some((t) => t.ci === "github-actions" && apis.running?.has(t.suiteId));
  return running ? { causes, targets: [], wait: true } : { causes, targets: unique };
}

/**
 * What identifies a commit's CI as it stands: each status as reported, each check run and suite with its
 * outcome. A re-run changes it (a new pipeline's link, new check runs), so a red result read again before its
 * re-run shows is known for the same one. Hashed by the caller.
 */
export function reportIdentity(report: CiReport): string {
  const statuses = report.statuses.map(
    (s) => `s\t${s.context}\t${s.state}\t${s.targetUrl ?? ""}\t${s.description ?? ""}`,
  );
  const runs = report.checkRuns.map((r) => `r\t${r.id}\t${r.status}\t${r.conclusion ?? ""}`);
  const suites = report.checkSuites.map((s) => `c\t${s.id}\t${s.status}\t${s.conclusion ?? ""}`);
  return [...statuses, ...runs, ...suites].sort().join("\n");
}

/** One check of one re-run, as its D1 row keeps it: asked for, then passed or failed again. */
export type RerunRecord = {
  headSha: string;
  round: number;
  check: string;
  cause: InfraCause | null;
  result: "passed" | "failed" | null;
};

/** The re-run the issue waits on (`IssueContext.ciRerun`). */
export type CiRerun = { headSha: string; count: number; fingerprint: string; checks: string[] };

/**
 * What a `ci` edge says of re-runs: the checks a new re-run asks for, and how those of the re-run it answers
 * did (a check that failed and then passed flipped; src/domain/flaky-checks.ts counts them).
 */
export function rerunRecords(
  before: CiRerun | null | undefined,
  after: CiRerun | null | undefined,
  event: { headSha: string; result: "green" | "red"; checks?: FailedCheck[]; rerunRefused?: string },
): RerunRecord[] {
  const records: RerunRecord[] = [];
  // A refused re-run never ran: it says nothing of its checks.
  if (before?.headSha === event.headSha && before.count > 0 && !event.rerunRefused) {
    const failing = new Set(event.result === "red" ? (event.checks ?? []).map((c) => c.name) : []);
    for (const check of before.checks) {
      const result = failing.has(check) ? "failed" : "passed";
      records.push({ headSha: before.headSha, round: before.count, check, cause: null, result });
    }
  }
  if (after && (after.headSha !== before?.headSha || after.count !== before.count)) {
    const causes = new Map((event.checks ?? []).map((c) => [c.name, c.cause ?? null]));
    for (const check of after.checks) {
      const cause = causes.get(check) ?? null;
      records.push({ headSha: after.headSha, round: after.count, check, cause, result: null });
    }
  }
  return records;
}

export const DEFAULT_CI_RERUNS = 1;
export const MAX_CI_RERUNS = 5;

/** The ci event's part this decision reads (src/domain/lifecycle.ts). */
type RedEvent = {
  headSha: string;
  result: "green" | "red";
  checks?: FailedCheck[];
  fingerprint?: string;
  rerun?: RerunTarget[];
  rerunRefused?: string;
};

export type RerunDecision =
  /** The red result already re-run, read again before its re-run showed: not a new result. */
  | { kind: "stale"; reason: string }
  | { kind: "rerun"; next: CiRerun; reason: string; targets: RerunTarget[] }
  /** Anything else: the result as it is (green to review, red to a fix session). */
  | { kind: "result" };

/**
 * Whether a CI result of the head re-runs its CI: a red one whose every failing check failed for the
 * infrastructure's sake and can be re-run, at most `allowed` times per head while the issue waits for CI.
 */
export function rerunDecision(
  current: CiRerun | null | undefined,
  e: RedEvent,
  allowed: number,
): RerunDecision {
  const round = current?.headSha === e.headSha ? current : null;
  if (e.result === "green" || e.rerunRefused) return { kind: "result" };
  if (round && e.fingerprint === round.fingerprint) {
    return {
      kind: "stale",
      reason: `stale: this red result of ${e.headSha.slice(0, 12)} was re-run already; the re-run's result decides`,
    };
  }
  const done = round?.count ?? 0;
  if (!e.rerun?.length || !e.fingerprint || done >= allowed) return { kind: "result" };
  const checks = e.checks ?? [];
  const why = checks.map((c) => `${c.name} ${c.cause ? CAUSE_TEXT[c.cause] : c.outcome}`).join(", ");
  return {
    kind: "rerun",
    next: {
      headSha: e.headSha,
      count: done + 1,
      fingerprint: e.fingerprint,
      checks: checks.map((c) => c.name),
    },
    reason: `CI re-run ${done + 1} of ${allowed}, no fix session spent: ${why}`.slice(0, 2_000),
    targets: e.rerun,
  };
}

/** How far back a check's re-runs count: one that passed on re-run within it is known to be flaky. */
export const FLAKY_WINDOW_MS = 7 * 24 * 60 * 60_000;

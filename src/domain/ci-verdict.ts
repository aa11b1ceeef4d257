/**
 * What a commit's CI says, decided from everything the forge holds for that exact sha: commit statuses, check
 * runs and check suites. One green check is never all of CI: a verdict is green only when every required
 * check has completed green. Pure.
 */
import type { CheckRun, CheckSuite, CiReport, CommitStatus } from "../forge/client/types.ts";
import type { InfraCause } from "./ci-rerun.ts";

/**
 * A failing check as a human sees it on the issue's page: its name, what it reported, its own short text, and
 * where it points (a CI's pipeline page, where its logs can be found); `cause`, where it failed for the
 * infrastructure's sake rather than the change's (src/domain/ci-rerun.ts).
 */
export type FailedCheck = {
  name: string;
  outcome: string;
  description?: string;
  url?: string;
  cause?: InfraCause;
};

/** What a `ci` event carries of its failing checks: the first few, each text cut short (the excerpt has it all). */
export const MAX_FAILED_CHECKS = 20;
export const MAX_CHECK_TEXT_CHARS = 300;

/** Where a failing check came from: what re-running it needs (src/domain/ci-rerun.ts). */
export type CheckOrigin =
  | { kind: "status" }
  | { kind: "run"; suiteId: number | null }
  | { kind: "suite"; id: number };

/** A failing check as shown, and where it came from. */
export type FailingCheck = { check: FailedCheck; origin: CheckOrigin };

/** `failing`: the first few, as a `ci` event carries them; `failed`: every one, with its origin. */
export type CiVerdict =
  | { kind: "pending" }
  | { kind: "green" }
  | { kind: "red"; excerpt: string; failing: FailedCheck[]; failed: FailingCheck[] };

/**
 * The checks that must pass. `names` non-empty: exactly these check names (a status context, a check run's
 * name, a check suite's app), each of which must be reported. Otherwise every reported check whose name
 * matches `pattern`, and at least one. `protected`: the checks branch protection requires, besides (names
 * or globs, as Gitea takes them): each must be reported, and every check it names must pass.
 */
export type RequiredChecks = { pattern: string; names: readonly string[]; protected?: readonly string[] };

/** `*` matches any run of characters, slashes included (`ci/woodpecker/*`). */
export function contextMatcher(pattern: string): (context: string) => boolean {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const regex = new RegExp(`^${source}$`);
  return (context) => regex.test(context);
}

type Check = {
  name: string;
  state: "pending" | "success" | "failure";
  /** What a failure is reported as: the status's state or the check's conclusion. */
  outcome: string;
  description: string | null;
  targetUrl: string | null;
  origin: CheckOrigin;
};

/** Conclusions that pass a check; any other, including one GitHub adds later, fails it (fail closed). */
const PASSING_CONCLUSIONS = new Set(["success", "neutral", "skipped"]);

export function ciVerdict(report: CiReport, required: RequiredChecks): CiVerdict {
  const checks = [
    ...latestStatuses(report.statuses).map(fromStatus),
    ...latestRuns(report.checkRuns).map(fromRun),
    ...report.checkSuites.map(fromSuite),
  ];
  const named = required.names.length > 0;
  const own = named ? (name: string) => required.names.includes(name) : contextMatcher(required.pattern);
  const guarded = (required.protected ?? []).map(contextMatcher);
  const counts = (name: string) => own(name) || guarded.some((matches) => matches(name));
  const counted = checks.filter((check) => counts(check.name));
  const failing = counted.filter((check) => check.state === "failure");
  if (failing.length > 0) {
    const failed = failing.map((check) => ({ check: failedCheck(check), origin: check.origin }));
    return {
      kind: "red",
      excerpt: clip(failing.map(describe).join("\n"), MAX_VERDICT_EXCERPT_CHARS),
      failing: failed.slice(0, MAX_FAILED_CHECKS).map((f) => f.check),
      failed,
    };
  }
  const reported = new Set(counted.map((check) => check.name));
  const complete =
    (named ? required.names.every((name) => reported.has(name)) : counted.length > 0) &&
    guarded.every((matches) => [...reported].some(matches));
  if (complete && counted.every((check) => check.state === "success")) return { kind: "green" };
  return { kind: "pending" };
}

/** Forges list every status ever posted, newest first: the newest per context counts. */
function latestStatuses(statuses: readonly CommitStatus[]): CommitStatus[] {
  const latest = new Map<string, CommitStatus>();
  for (const status of statuses) if (!latest.has(status.context)) latest.set(status.context, status);
  return [...latest.values()];
}

/** A re-run adds a run of the same name to the same suite; the newest (highest id) replaces the others. */
function latestRuns(runs: readonly CheckRun[]): CheckRun[] {
  const latest = new Map<string, CheckRun>();
  for (const run of runs) {
    const key = `${run.suiteId}\n${run.name}`;
    const seen = latest.get(key);
    if (!seen || run.id > seen.id) latest.set(key, run);
  }
  return [...latest.values()];
}

function fromStatus(status: CommitStatus): Check {
  const state = status.state === "success" ? "success" : status.state === "pending" ? "pending" : "failure";
  return { name: status.context, state, outcome: status.state, ...pick(status), origin: { kind: "status" } };
}

/** Anything short of `completed` (queued, in_progress, waiting, requested, pending) still runs. */
function completion(check: Pick<CheckRun, "status" | "conclusion">): Check["state"] {
  if (check.status !== "completed") return "pending";
  return check.conclusion !== null && PASSING_CONCLUSIONS.has(check.conclusion) ? "success" : "failure";
}

function fromRun(run: CheckRun): Check {
  return {
    name: run.name,
    state: completion(run),
    outcome: run.conclusion ?? run.status,
    description: run.summary,
    targetUrl: run.detailsUrl,
    origin: { kind: "run", suiteId: run.suiteId },
  };
}

function fromSuite(suite: CheckSuite): Check {
  return {
    name: suite.app,
    state: completion(suite),
    outcome: suite.conclusion ?? suite.status,
    description: "check suite",
    targetUrl: null,
    origin: { kind: "suite", id: suite.id },
  };
}

const pick = (s: CommitStatus) => ({ description: s.description, targetUrl: s.targetUrl });

/** A check's own text (a run's output summary) can be long; the revise session gets its start. */
export const MAX_DESCRIPTION_CHARS = 2_000;
/**
 * The most a red CI excerpt may be, CI logs included: what a `ci` event carries and the revise job's
 * instructions hold. Bounded here, where it is made, so that no later step can refuse it.
 */
export const MAX_CI_EXCERPT_CHARS = 20_000;
/** The failing checks' part; the rest is left for CI logs. */
export const MAX_VERDICT_EXCERPT_CHARS = 8_000;

/** `text` cut to `max` characters at most, saying how much was cut; `keep` says which end stays. */
export function clip(text: string, max: number, keep: "start" | "end" = "start"): string {
  if (text.length <= max) return text;
  const note = (cut: number) => `[… ${cut} characters cut]`;
  const room = Math.max(0, max - note(text.length).length - 1);
  const cut = note(text.length - room);
  return keep === "start" ? `${text.slice(0, room)}\n${cut}` : `${cut}\n${text.slice(text.length - room)}`;
}

/** Only a web page is linked: a check's target URL is whatever its CI posted. */
const webUrl = (url: string | null) => (url && /^https?:\/\//i.test(url) ? url.slice(0, 2_000) : undefined);

function failedCheck(c: Check): FailedCheck {
  const description = c.description?.trim().slice(0, MAX_CHECK_TEXT_CHARS);
  const url = webUrl(c.targetUrl);
  return {
    name: c.name.slice(0, MAX_CHECK_TEXT_CHARS),
    outcome: c.outcome.slice(0, 100),
    ...(description && { description }),
    ...(url && { url }),
  };
}

const describe = (c: Check) => {
  const text = c.description?.slice(0, MAX_DESCRIPTION_CHARS);
  return `${c.name}: ${c.outcome}${text ? ` — ${text}` : ""}${c.targetUrl ? ` (${c.targetUrl})` : ""}`;
};

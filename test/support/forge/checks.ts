import type { CheckRun, CheckSuite, Repo, User } from "./state.ts";
import type { Store } from "./store.ts";

/** The app's suite on `sha`, created on its first check run as GitHub does. */
export function suiteFor(
  store: Store,
  repo: Repo,
  sha: string,
  app: User,
): { suite: CheckSuite; created: boolean } {
  const found = repo.checkSuites.find((suite) => suite.sha === sha && suite.appUserId === app.id);
  if (found) return { suite: found, created: false };
  const suite: CheckSuite = { id: store.nextId(), sha, appUserId: app.id, createdAt: store.now() };
  repo.checkSuites.push(suite);
  return { suite, created: true };
}

/** A suite's status and conclusion, derived from its latest runs as GitHub derives them. */
export function suiteState(repo: Repo, suite: CheckSuite): Pick<CheckRun, "status" | "conclusion"> {
  const runs = latestRuns(repo.checkRuns.filter((run) => run.suiteId === suite.id));
  if (runs.length === 0) return { status: "queued", conclusion: null };
  if (runs.some((run) => run.status !== "completed")) return { status: "in_progress", conclusion: null };
  const worst = CONCLUSION_ORDER.find((conclusion) => runs.some((run) => run.conclusion === conclusion));
  return { status: "completed", conclusion: worst ?? "success" };
}

// The conclusion a completed suite takes: the first of these any of its runs has.
const CONCLUSION_ORDER = [
  "action_required",
  "cancelled",
  "timed_out",
  "failure",
  "stale",
  "neutral",
  "skipped",
  "success",
] as const;

/** GitHub's `filter=latest`: the newest run of each name within each suite. */
export function latestRuns(runs: readonly CheckRun[]): CheckRun[] {
  const latest = new Map<string, CheckRun>();
  for (const run of runs) {
    const key = `${run.suiteId}\n${run.name}`;
    const seen = latest.get(key);
    if (!seen || run.id > seen.id) latest.set(key, run);
  }
  return [...latest.values()].sort((a, b) => b.id - a.id);
}

/**
 * What the supervisor reads of its project from D1 (the read model the Durable Objects flush to): the runners
 * bound to or serving it, its live issues with when they entered their state, its dead-lettered effects and its
 * blocked issues' dependencies. The job queue and today's spend are the ProjectDO's own, passed in.
 */
import { utcDay } from "../../../src/domain/budget.ts";
import { FLAKY_WINDOW_MS } from "../../../src/domain/ci-rerun.ts";
import type { FlakyCheck } from "../../../src/domain/flaky-checks.ts";
import type { State } from "../../../src/domain/lifecycle.ts";
import type { SuspectRotation } from "../../../src/domain/runner-tokens.ts";
import type {
  DeadLetterEntry,
  DependencyEdge,
  FinishedWorktree,
  IssueHealth,
  JobHealth,
  RunnerHealth,
  Snapshot,
} from "../../../src/domain/supervisor.ts";
import type { Env } from "../../../src/env.ts";
import type { Project } from "../../../src/projects/store.ts";

const DAY = 24 * 60 * 60_000;

type RunnerRow = {
  id: string;
  name: string;
  projects: string | null;
  last_seen_at: number;
  worktrees: number | null;
  disk_free_bytes: number | null;
  disk_total_bytes: number | null;
  mem_available_bytes: number | null;
  mem_total_bytes: number | null;
  load1: number | null;
  cpus: number | null;
  host_at: number | null;
  suspect_rotation: string | null;
  superseded_seen_at: number | null;
};

const RUNNERS = `
SELECT id, name, projects, last_seen_at, worktrees, disk_free_bytes, disk_total_bytes, mem_available_bytes,
  mem_total_bytes, load1, cpus, host_at, suspect_rotation, superseded_seen_at
FROM runners ORDER BY name, id`;

/**
 * Each live issue, with the moment (and history seq) of the last edge that brought it into its current state;
 * an issue whose entry into it is pruned from history counts from its row's last write.
 */
const ISSUES = `
SELECT i.number, i.state, i.updated_at AS updatedAt, e.seq AS enteredSeq, e.at AS enteredAt
FROM issues i
LEFT JOIN transitions e ON e.project_id = i.project_id AND e.number = i.number AND e.seq = (
  SELECT MAX(t.seq) FROM transitions t
  WHERE t.project_id = i.project_id AND t.number = i.number AND t.outcome = 'applied'
    AND t.to_state = i.state AND t.from_state <> t.to_state)
WHERE i.project_id = ? AND i.state NOT IN ('merged', 'abandoned')`;

/**
 * `effect_failed` entries of the live issues (each read by its history's key), and of any issue within the
 * window (over transitions_by_time): never a scan of the project's whole history.
 */
const DEAD_LETTERS = `
SELECT t.number, t.seq, t.at, t.reason FROM issues i
JOIN transitions t ON t.project_id = i.project_id AND t.number = i.number
WHERE i.project_id = ? AND i.state NOT IN ('merged', 'abandoned') AND t.event = 'effect_failed'
UNION
SELECT number, seq, at, reason FROM transitions
WHERE at >= ? AND project_id = ? AND event = 'effect_failed'
ORDER BY 1, 2`;

const DEPENDENCIES = `
SELECT d.dependent, d.dependency, dep.state
FROM issue_dependencies d
JOIN issues b ON b.project_id = d.project_id AND b.number = d.dependent AND b.state = 'blocked'
LEFT JOIN issues dep ON dep.project_id = d.project_id AND dep.number = d.dependency
WHERE d.project_id = ?`;

/**
 * Finished issues that had sessions, ended within `FINISHED_WINDOW` past their retention, with their last
 * session and last reap job that did not fail. Read over issues_by_state, worker_sessions_by_issue and
 * jobs_by_issue.
 */
const FINISHED = `
SELECT i.number, i.state, i.updated_at AS endedAt, MAX(s.updated_at) AS sessionAt,
  (SELECT MAX(j.updated_at) FROM jobs j
   WHERE j.project_id = i.project_id AND j.number = i.number AND j.kind = 'reap'
     AND j.status IN ('queued', 'leased', 'done')) AS reapAt
FROM issues i
JOIN worker_sessions s ON s.project_id = i.project_id AND s.number = i.number
WHERE i.project_id = ? AND i.state IN ('merged', 'abandoned') AND i.updated_at >= ?
GROUP BY i.number, i.state, i.updated_at
ORDER BY i.updated_at DESC
LIMIT 500`;
/** Each CI check that passed on a re-run within the window: how often, and when last (src/domain/flaky-checks.ts). */
const FLAKY = `
SELECT check_name AS name, COUNT(*) AS flips, MAX(settled_at) AS lastAt FROM ci_reruns
WHERE project_id = ? AND requested_at >= ? AND result = 'passed'
GROUP BY check_name ORDER BY flips DESC, name LIMIT 50`;

/** A worktree left over longer than this after its retention is no longer looked for. */
const FINISHED_WINDOW = 30 * DAY;

/**
 * What the ProjectDO knows itself: its open jobs, today's spend, and the runners that held its jobs lately
 * (`servedBy`): with the runners bound to it, the only ones its supervisor reports on.
 */
export type OwnState = { jobs: JobHealth[]; spentTodayUsd: number; servedBy: readonly string[] };

/** A runner that held one of a project's jobs within this long serves it, for its supervisor. */
export const SERVING_WINDOW_MS = 7 * DAY;

export async function gatherSnapshot(
  env: Env,
  project: Project,
  own: OwnState,
  now: number,
): Promise<Snapshot> {
  const { settings } = project;
  const finishedSince = now - settings.timeouts.retention - FINISHED_WINDOW;
  const batch = await env.DB.batch<Record<string, unknown>>([
    env.DB.prepare(RUNNERS),
    env.DB.prepare(ISSUES).bind(project.id),
    env.DB.prepare(DEAD_LETTERS).bind(project.id, now - settings.supervisor.deadLetterWindowMs, project.id),
    env.DB.prepare(DEPENDENCIES).bind(project.id),
    env.DB.prepare(FINISHED).bind(project.id, finishedSince),
    env.DB.prepare(FLAKY).bind(project.id, now - FLAKY_WINDOW_MS),
  ]);
  const [runners, issues, deadLetters, dependencies, finished, flaky] = batch;
  return {
    now,
    runners: rows<RunnerRow>(runners)
      .filter((row) => serves(row, project.id, own.servedBy))
      .map(runnerHealth),
    issues: rows<{
      number: number;
      state: State;
      updatedAt: number;
      enteredSeq: number | null;
      enteredAt: number | null;
    }>(issues).map(
      (row): IssueHealth => ({
        number: row.number,
        state: row.state,
        enteredAt: row.enteredAt ?? row.updatedAt,
        enteredSeq: row.enteredSeq ?? 0,
        lastEventAt: row.updatedAt,
      }),
    ),
    jobs: own.jobs,
    deadLetters: rows<{ number: number; seq: number; at: number; reason: string | null }>(deadLetters).map(
      (row): DeadLetterEntry => ({
        number: row.number,
        seq: row.seq,
        at: row.at,
        reason: row.reason ?? "an effect failed for good",
      }),
    ),
    dependencies: rows<DependencyEdge>(dependencies),
    finished: rows<FinishedWorktree>(finished),
    flakyChecks: rows<FlakyCheck>(flaky),
    spentTodayUsd: own.spentTodayUsd,
    dailyCapUsd: settings.dailyBudgetUsd,
    day: utcDay(now),
    timeouts: settings.timeouts,
    limits: settings.supervisor,
  };
}

/** A batch's rows, typed as the query selects them. */
const rows = <T>(result: D1Result<Record<string, unknown>> | undefined): T[] =>
  (result?.results ?? []) as T[];

/**
 * A runner is this project's business when its registration binds it to the project, or when it held one of
 * the project's jobs lately; any other runner (bound elsewhere, or serving other projects only) is not, and
 * its name and health never reach this project's forge.
 */
function serves(row: RunnerRow, projectId: string, servedBy: readonly string[]): boolean {
  if (servedBy.includes(row.id)) return true;
  if (row.projects === null) return false;
  try {
    const bound = JSON.parse(row.projects) as unknown;
    return Array.isArray(bound) && bound.includes(projectId);
  } catch {
    return false;
  }
}

function runnerHealth(row: RunnerRow): RunnerHealth {
  return {
    id: row.id,
    name: row.name,
    lastSeenAt: row.last_seen_at,
    disk:
      row.disk_free_bytes === null || row.disk_total_bytes === null
        ? null
        : { freeBytes: row.disk_free_bytes, totalBytes: row.disk_total_bytes },
    memory:
      row.mem_available_bytes === null || row.mem_total_bytes === null
        ? null
        : { availableBytes: row.mem_available_bytes, totalBytes: row.mem_total_bytes },
    load: row.load1 === null || row.cpus === null ? null : { load1: row.load1, cpus: row.cpus },
    hostAt: row.host_at,
    worktrees: row.worktrees,
    rotation: row.suspect_rotation
      ? { ...(JSON.parse(row.suspect_rotation) as SuspectRotation), supersededSeenAt: row.superseded_seen_at }
      : null,
  };
}

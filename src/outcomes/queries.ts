/**
 * The outcomes report's reads from D1's history (transitions, usage, issues), one batch of four statements,
 * each aggregated in SQLite so that what crosses from D1 is a row per finished issue or per group, never per
 * edge. One project's over `transitions_by_project_time` (project_id, at, … covering what is read of an edge),
 * an issue's edges by the primary key, `usage_by_day` and `issues_by_state`; every project's over
 * `transitions_by_time` (at).
 */
import type { Env } from "../env.ts";
import type { EdgeRow, FinishedRow, OutcomeRows, StateRow, UsageDayRow } from "./rows.ts";
import { DAY_MS, type Window } from "./window.ts";

const TERMINAL = "('merged', 'done', 'abandoned')";

/** `?1` is the project, when there is one; the window is `?2` (from) to `?3` (to), `?4` is min(to, now). */
const scope = (project: string | null, alias = "") =>
  project === null ? "" : `${alias}project_id = ?1 AND `;

/**
 * Each issue that ended in the window, with what its history up to then says of it: one correlated read of its
 * edges by the primary key (`t.seq > 0` and `+t.at` keep the planner there rather than on the window's
 * index), its figures packed in a JSON array so that no sort of every edge is needed to group them.
 */
const finishedSql = (project: string | null) => `
WITH finished AS (
  SELECT project_id, number, MAX(at) AS at, to_state AS ended FROM transitions
  WHERE ${scope(project)}at >= ?2 AND at < ?3 AND outcome = 'applied' AND to_state IN ${TERMINAL}
    AND from_state <> to_state
  GROUP BY project_id, number
)
SELECT f.at, f.ended, (
    SELECT json_array(
      MIN(CASE WHEN t.event = 'triage' THEN t.at END),
      SUM(t.event = 'review'),
      SUM(t.to_state IN ('escalated', 'awaiting_approval') AND t.from_state <> t.to_state),
      SUM(t.to_state = 'escalated' AND t.from_state <> 'escalated'),
      substr(MIN(CASE WHEN t.event = 'ci' THEN printf('%012d', t.seq) || t.to_state END), 13))
    FROM transitions t
    WHERE t.project_id = f.project_id AND t.number = f.number AND t.seq > 0 AND t.outcome = 'applied'
      AND +t.at <= f.at
  ) AS history,
  (SELECT COALESCE(SUM(u.usd), 0) FROM usage u WHERE u.project_id = f.project_id AND u.number = f.number) AS usd
FROM finished f`;

/** The packed history's order: labeled_at, critic_rounds, human_rounds, escalations, first_ci. */
type PackedHistory = [number | null, number, number, number, string | null];

function unpack(row: { at: number; ended: FinishedRow["ended"]; history: string; usd: number }): FinishedRow {
  const [labeled, critic, human, escalations, firstCi] = JSON.parse(row.history) as PackedHistory;
  return {
    at: row.at,
    ended: row.ended,
    labeled_at: labeled,
    critic_rounds: critic,
    human_rounds: human,
    escalations,
    first_ci: firstCi,
    usd: row.usd,
  };
}

/**
 * Every edge since the window began, grouped by (from, to, event), whether it is inside the window, and its
 * day there: the escalations per day and cause, and the time per state (./outcomes.ts), without ordering
 * any issue's edges. `ms`: from each edge inside the window to its end (`?4`).
 */
const edgesSql = (project: string | null) => `
SELECT from_state, to_state, event, at < ?3 AS inside, CASE WHEN at < ?3 THEN at / ${DAY_MS} END AS day,
  COUNT(*) AS n, SUM(CASE WHEN at < ?3 THEN ?4 - at ELSE 0 END) AS ms
FROM transitions WHERE ${scope(project)}at >= ?2 AND outcome = 'applied'
GROUP BY from_state, to_state, event, inside, day`;

/** How many issues are in each state now. */
const statesSql = (project: string | null) => `
SELECT state, COUNT(*) AS n FROM issues ${project === null ? "" : "WHERE project_id = ?1 "}GROUP BY state`;

const usageSql = (project: string | null) => `
SELECT at / ${DAY_MS} AS day, SUM(usd) AS usd, SUM(input_tokens) AS input,
  SUM(cache_read_tokens) AS cache_read, SUM(cache_write_tokens) AS cache_write
FROM usage WHERE ${scope(project)}at >= ?2 AND at < ?3
GROUP BY day`;

/** One project's rows, or every project's (`project` null). */
export async function outcomeRows(
  env: Env,
  project: string | null,
  window: Window,
  now: number,
): Promise<OutcomeRows> {
  const end = Math.min(window.toMs, Math.max(now, window.fromMs));
  const values = [project, window.fromMs, window.toMs, end];
  // As many values as the statement has parameters (`?1` … its highest): SQLite refuses more.
  const bind = (sql: string) => {
    const count = Math.max(0, ...[...sql.matchAll(/\?(\d)/g)].map((m) => Number(m[1])));
    return env.DB.prepare(sql).bind(...values.slice(0, count));
  };
  const [finished, edges, states, usage] = await env.DB.batch([
    bind(finishedSql(project)),
    bind(edgesSql(project)),
    bind(statesSql(project)),
    bind(usageSql(project)),
  ]);
  return {
    finished: ((finished?.results ?? []) as Parameters<typeof unpack>[0][]).map(unpack),
    edges: (edges?.results ?? []) as EdgeRow[],
    states: (states?.results ?? []) as StateRow[],
    windowMs: end - window.fromMs,
    usage: (usage?.results ?? []) as UsageDayRow[],
  };
}

/**
 * Issue histories as D1 holds them (`transitions` edges and the `issues` row an IssueDO flushes), for the
 * outcomes report's tests, the browser test and the benchmark. Rows use D1's column names.
 */
import { insertRows } from "./seed-sql.ts";

type Row = Record<string, string | number | null>;
export type History = ReturnType<typeof issueHistory>;

/** One edge: the event, the state it led to, and how long after the edge before it (the first: after `start`). */
export type Edge = [event: string, to: string, afterMs: number];

const HOUR = 3_600_000;

/** The edges of an issue that goes through CI green the first time and one approving review to merged. */
export const MERGED_FIRST_PASS: Edge[] = [
  ["triage", "queued", 0],
  ["dispatched", "running", HOUR],
  ["phase", "awaiting_ci", HOUR],
  ["ci", "awaiting_review", HOUR],
  ["review", "merging", HOUR],
  ["merge_confirmed", "merged", HOUR],
];

/** Red CI once, fixed, then held for a human's approval of protected paths, then merged. */
export const MERGED_AFTER_RED_CI: Edge[] = [
  ["triage", "queued", 0],
  ["dispatched", "running", HOUR],
  ["phase", "awaiting_ci", HOUR],
  ["ci", "revising", HOUR],
  ["dispatched", "revising", HOUR],
  ["phase", "awaiting_ci", HOUR],
  ["ci", "awaiting_review", HOUR],
  ["review", "awaiting_approval", HOUR],
  ["human_approval", "merging", 2 * HOUR],
  ["merge_confirmed", "merged", HOUR],
];

/** A session that asks a human, whom nobody answers: abandoned by the operator. */
export const ESCALATED_THEN_ABANDONED: Edge[] = [
  ["triage", "queued", 0],
  ["dispatched", "running", HOUR],
  ["phase", "escalated", HOUR],
  ["abandon", "abandoned", 4 * HOUR],
];

/** The `transitions` rows of `edges` starting at `start`, and the issue's `issues` row after the last. */
export function issueHistory(project: string, number: number, start: number, edges: Edge[]) {
  let at = start;
  let from = "new";
  const transitions: Row[] = edges.map(([event, to, after], i) => {
    at += after;
    const row = {
      project_id: project,
      number,
      seq: i + 1,
      from_state: from,
      to_state: to,
      event,
      event_id: `${project}#${number}:${i + 1}`,
      cause_kind: "system",
      cause_id: "seed",
      outcome: "applied",
      reason: null,
      at,
    };
    from = to;
    return row;
  });
  const issue: Row = {
    project_id: project,
    number,
    state: from,
    iteration: 1,
    seq: edges.length,
    updated_at: at,
  };
  return { transitions, issue };
}

/** A `usage` row: what a session of the issue cost, reported at `at`. */
export function usageRow(project: string, number: number, usd: number, at: number, cacheRead = 0): Row {
  return {
    id: `${project}-${number}-${at}`,
    project_id: project,
    number,
    iteration: 1,
    session_id: null,
    input_tokens: 1_000,
    output_tokens: 500,
    cache_read_tokens: cacheRead,
    cache_write_tokens: 1_000,
    usd,
    turns: 5,
    at,
  };
}

/** The INSERTs that seed `histories` into a local D1 (`startLocalWorker({ seedSql })`). */
export function historyInserts(histories: readonly History[]): string[] {
  return [
    ...insertRows(
      "transitions",
      histories.flatMap((h) => h.transitions),
    ),
    ...insertRows(
      "issues",
      histories.map((h) => h.issue),
    ),
  ];
}

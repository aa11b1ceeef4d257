/**
 * The IssueDO's own SQLite tables: the issue's context, its history (every applied or rejected event) and
 * the timers that share the object's one alarm. Its outbox is `outbox.ts`.
 */

import type { HistoryEntry, IssueSummary } from "../../src/contracts/issue-object.ts";
import {
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS_MS,
  INITIAL_CONTEXT,
  type IssueContext,
  type Limits,
  type TimerKind,
} from "../../src/domain/lifecycle.ts";
import type { Timeouts, Timer } from "../../src/domain/timers.ts";
import type { CauseKind } from "../../src/issue-events.ts";
import { addColumns } from "../shared/columns.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS issue (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  project TEXT NOT NULL,
  number INTEGER NOT NULL,
  context TEXT NOT NULL,
  limits TEXT NOT NULL,
  timeouts TEXT NOT NULL,
  seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS history (
  seq INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  event TEXT NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  outcome TEXT NOT NULL,
  reason TEXT,
  cause_kind TEXT NOT NULL,
  cause_id TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS timers (
  kind TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL,
  armed_seq INTEGER NOT NULL
);
`;

/** Columns added after the tables were first created. */
const ADDED_HISTORY_COLUMNS = {
  // What an entry keeps of its event for a human (JSON): a CI result's failing checks.
  detail: "TEXT",
};

export type { Timeouts, Timer };

export type IssueRow = {
  project: string;
  number: number;
  context: IssueContext;
  limits: Limits;
  timeouts: Timeouts;
  seq: number;
};

/** Thin typed access to the tables; every write method is meant to run inside `transactionSync`. */
export class IssueStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
    addColumns(sql, "history", ADDED_HISTORY_COLUMNS);
  }

  issue(): IssueRow | null {
    const row = this.sql
      .exec<Record<string, string | number>>("SELECT * FROM issue WHERE id = 1")
      .toArray()[0];
    if (!row) return null;
    return {
      project: String(row.project),
      number: Number(row.number),
      context: { ...INITIAL_CONTEXT, ...JSON.parse(String(row.context)) },
      limits: JSON.parse(String(row.limits)),
      // Rows written before a timer kind existed run it with its default.
      timeouts: { ...DEFAULT_TIMEOUTS_MS, ...JSON.parse(String(row.timeouts)) },
      seq: Number(row.seq),
    };
  }

  /** The row for a fresh issue; not written until its first event is recorded. */
  static fresh(project: string, number: number): IssueRow {
    return {
      project,
      number,
      context: INITIAL_CONTEXT,
      limits: DEFAULT_LIMITS,
      timeouts: DEFAULT_TIMEOUTS_MS,
      seq: 0,
    };
  }

  /** The issue's lifecycle context without its history: what an effect's deliverer reads. */
  summary(): IssueSummary | null {
    const row = this.issue();
    if (!row) return null;
    const { context: c } = row;
    return {
      project: row.project,
      number: row.number,
      state: c.state,
      iteration: c.iteration,
      branch: c.branch,
      sessionId: c.sessionId,
      headSha: c.headSha,
      prOpened: c.prOpened,
      prNumber: c.prNumber,
      ciFixes: c.ciFixes,
      criticRounds: c.criticRounds,
      updates: c.updates,
      blockers: c.blockers,
      brief: c.brief,
      summary: c.summary,
      reason: c.reason,
      kind: c.kind ?? "code",
      formula: c.formula ?? null,
      vaultStep: c.vaultStep ?? null,
      vaultItem: c.vaultItem,
      overridden: c.overridden ?? [],
      escalation: c.escalation ?? null,
      recovering: Boolean(c.recovery),
      proposal: c.proposal ?? null,
    };
  }

  saveIssue(row: IssueRow): void {
    this.sql.exec(
      `INSERT INTO issue (id, project, number, context, limits, timeouts, seq) VALUES (1, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET context = excluded.context, limits = excluded.limits,
         timeouts = excluded.timeouts, seq = excluded.seq`,
      row.project,
      row.number,
      JSON.stringify(row.context),
      JSON.stringify(row.limits),
      JSON.stringify(row.timeouts),
      row.seq,
    );
  }

  historyEntry(eventId: string): HistoryEntry | null {
    const row = this.sql
      .exec<Record<string, string | number | null>>("SELECT * FROM history WHERE event_id = ?", eventId)
      .toArray()[0];
    return row ? toHistory(row) : null;
  }

  appendHistory(entry: HistoryEntry): void {
    this.sql.exec(
      `INSERT INTO history (seq, event_id, event, from_state, to_state, outcome, reason, cause_kind, cause_id, at, detail)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      entry.seq,
      entry.eventId,
      entry.event,
      entry.from,
      entry.to,
      entry.outcome,
      entry.reason,
      entry.cause.kind,
      entry.cause.id,
      entry.at,
      entry.ci ? JSON.stringify({ ci: entry.ci }) : null,
    );
  }

  /**
   * Whether the issue entered `merging` since it last entered a state outside `path`: only then may it be in
   * the project's merge queue (its merge asked there), and its leaving the path concern the queue.
   */
  mergedSinceLeaving(path: readonly string[]): boolean {
    const marks = path.map(() => "?").join(", ");
    const row = this.sql
      .exec(
        `SELECT 1 FROM history WHERE outcome = 'applied' AND to_state = 'merging' AND seq > COALESCE(
           (SELECT MAX(seq) FROM history WHERE outcome = 'applied' AND to_state NOT IN (${marks})), 0)
         LIMIT 1`,
        ...path,
      )
      .toArray();
    return row.length > 0;
  }

  history(limit: number): HistoryEntry[] {
    return this.sql
      .exec<Record<string, string | number | null>>(
        "SELECT * FROM (SELECT * FROM history ORDER BY seq DESC LIMIT ?) ORDER BY seq",
        limit,
      )
      .toArray()
      .map(toHistory);
  }

  deleteTimer(kind: TimerKind): void {
    this.sql.exec("DELETE FROM timers WHERE kind = ?", kind);
  }

  replaceTimers(timers: readonly Timer[]): void {
    this.sql.exec("DELETE FROM timers");
    for (const timer of timers) {
      this.sql.exec(
        "INSERT INTO timers (kind, due_at, armed_seq) VALUES (?, ?, ?)",
        timer.kind,
        timer.dueAt,
        timer.armedSeq,
      );
    }
  }

  timers(): Timer[] {
    return this.sql
      .exec<{ kind: TimerKind; due_at: number; armed_seq: number }>("SELECT * FROM timers ORDER BY due_at")
      .toArray()
      .map((r) => ({ kind: r.kind, dueAt: r.due_at, armedSeq: r.armed_seq }));
  }
}

function toHistory(row: Record<string, string | number | null>): HistoryEntry {
  return {
    seq: Number(row.seq),
    eventId: String(row.event_id),
    event: String(row.event),
    from: String(row.from_state),
    to: String(row.to_state),
    outcome: row.outcome === "applied" || row.outcome === "parked" ? row.outcome : "rejected",
    reason: row.reason === null ? null : String(row.reason),
    cause: { kind: String(row.cause_kind) as CauseKind, id: String(row.cause_id) },
    at: Number(row.at),
    ...(typeof row.detail === "string" && (JSON.parse(row.detail) as Pick<HistoryEntry, "ci">)),
  };
}

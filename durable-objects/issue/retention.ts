/**
 * An IssueDO's own retention: history entries (and dead letters) older than the project's `retentionDays`
 * are pruned from its alarm, which is armed for the oldest one that may go. The newest entries are always
 * kept, so an issue page still tells how the issue ended; an event id pruned from the history can no longer
 * be recognised as a duplicate, which no sender repeats after that long.
 */
import { DEFAULT_RETENTION_DAYS } from "../../src/domain/lifecycle.ts";

/** History entries kept whatever their age. */
export const HISTORY_KEPT = 50;

const DAY_MS = 24 * 60 * 60_000;

export const retentionMs = (days: number | undefined) => (days ?? DEFAULT_RETENTION_DAYS) * DAY_MS;

export class Retention {
  constructor(private readonly sql: SqlStorage) {}

  /** When the oldest prunable entry comes due, if any. */
  nextDue(keepMs: number): number | null {
    const row = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(at) AS at FROM history WHERE seq <= (SELECT MAX(seq) FROM history) - ?`,
        HISTORY_KEPT,
      )
      .toArray()[0];
    const deadLetter = this.sql
      .exec<{ at: number | null }>("SELECT MIN(at) AS at FROM dead_letter")
      .toArray()[0];
    const oldest = [row?.at, deadLetter?.at].filter((t): t is number => typeof t === "number");
    return oldest.length === 0 ? null : Math.min(...oldest) + keepMs;
  }

  /** Meant to run inside `transactionSync`. */
  prune(now: number, keepMs: number): void {
    const before = now - keepMs;
    this.sql.exec(
      "DELETE FROM history WHERE at <= ? AND seq <= (SELECT MAX(seq) FROM history) - ?",
      before,
      HISTORY_KEPT,
    );
    this.sql.exec("DELETE FROM dead_letter WHERE at <= ?", before);
  }
}

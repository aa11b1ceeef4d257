/**
 * What the sessions were seen doing (runner/drivers/activity.ts), kept by its IssueDO for the
 * dashboard: the newest `KEEP` items, oldest dropped first. Informational: a lost batch costs nothing.
 */
import type { StoredActivity } from "../../src/contracts/issue-object.ts";
import type { ActivityItem } from "../../src/runner-api/contract.ts";

export const KEEP_ACTIVITY = 500;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS activity (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL
);
`;

export class SessionActivity {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** Runs inside `transactionSync`. */
  append(jobId: string, items: readonly ActivityItem[]): void {
    for (const item of items) {
      this.sql.exec(
        "INSERT INTO activity (job_id, at, kind, text) VALUES (?, ?, ?, ?)",
        jobId,
        item.at,
        item.kind,
        item.text,
      );
    }
    this.sql.exec("DELETE FROM activity WHERE seq <= (SELECT MAX(seq) FROM activity) - ?", KEEP_ACTIVITY);
  }

  /** The newest `limit` items, oldest first. */
  latest(limit: number): StoredActivity[] {
    return this.sql
      .exec<{ seq: number; job_id: string; at: number; kind: ActivityItem["kind"]; text: string }>(
        "SELECT * FROM (SELECT * FROM activity ORDER BY seq DESC LIMIT ?) ORDER BY seq",
        limit,
      )
      .toArray()
      .map((r) => ({ seq: r.seq, jobId: r.job_id, at: r.at, kind: r.kind, text: r.text }));
  }
}

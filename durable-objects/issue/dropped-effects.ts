/**
 * Effects the IssueDO dropped undelivered: decided on a state, head or vault item the issue has since left
 * (src/domain/effect-basis.ts). Each is kept with why, the newest first, for the page and the CLI; the
 * issue's history stays the record of its events.
 */
import type { DroppedEffect } from "../../src/contracts/issue-object.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS dropped_effect (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  at INTEGER NOT NULL
);
`;

/** How many are kept: the newest; a drop is a fact about the moment, not work left to do. */
const KEPT = 50;

export class DroppedEffects {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** Meant to run in the transaction that removes the effect from the outbox. */
  add(kind: string, reason: string, now: number): void {
    this.sql.exec("INSERT INTO dropped_effect (kind, reason, at) VALUES (?, ?, ?)", kind, reason, now);
    this.sql.exec("DELETE FROM dropped_effect WHERE id <= (SELECT MAX(id) FROM dropped_effect) - ?", KEPT);
  }

  list(limit: number): DroppedEffect[] {
    return this.sql
      .exec<DroppedEffect>("SELECT kind, reason, at FROM dropped_effect ORDER BY id DESC LIMIT ?", limit)
      .toArray();
  }
}

/**
 * Effects the IssueDO gave up on: refused for good by the forge, or still failing after the project's
 * `effects.maxAttempts`. Each is kept with its last error for a human (the issue page lists them; the issue
 * escalates with the same reason), and its lane goes on with the effects behind it.
 */
import type { DeadLetter } from "../../src/contracts/issue-object.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS dead_letter (
  id INTEGER PRIMARY KEY,
  channel TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  error TEXT NOT NULL,
  at INTEGER NOT NULL
);
`;

export class DeadLetters {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** Keeps an outbox row under its own id; meant to run in the transaction that removes it from the outbox. */
  add(
    row: { id: number; channel: string; payload: string; attempts: number },
    error: string,
    now: number,
  ): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO dead_letter (id, channel, payload, attempts, error, at) VALUES (?, ?, ?, ?, ?, ?)",
      row.id,
      row.channel,
      row.payload,
      row.attempts,
      error,
      now,
    );
  }

  list(limit: number): DeadLetter[] {
    return this.sql
      .exec<{ id: number; channel: string; attempts: number; error: string; at: number }>(
        "SELECT id, channel, attempts, error, at FROM dead_letter ORDER BY id DESC LIMIT ?",
        limit,
      )
      .toArray()
      .map((r) => ({ ...r, kind: kindOf(r.channel) }));
  }

  /** Removes dead letter `id` and gives back what it held (its effect, to send again); null if none. */
  take(id: number): { channel: string; kind: string; payload: string } | null {
    const row = this.sql
      .exec<{ channel: string; payload: string }>("SELECT channel, payload FROM dead_letter WHERE id = ?", id)
      .toArray()[0];
    if (!row) return null;
    this.sql.exec("DELETE FROM dead_letter WHERE id = ?", id);
    return { ...row, kind: kindOf(row.channel) };
  }

  /** Retention: dead letters older than `before` are dropped. */
  prune(before: number): void {
    this.sql.exec("DELETE FROM dead_letter WHERE at < ?", before);
  }
}

const kindOf = (channel: string) => channel.replace(/^effect:/, "");

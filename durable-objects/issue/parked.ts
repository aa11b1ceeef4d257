/**
 * The IssueDO's parked events: events that came before the state that accepts them (src/domain/early-events.ts),
 * kept under their own ids until a later edge lets them apply, no state can take them any more, or they
 * expire. Every write is meant to run inside the caller's `transactionSync`.
 */
import type { EventEnvelope } from "../../src/issue-events.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS parked (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  envelope TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS parked_expiry ON parked (expires_at);
`;

/** A parked event: its envelope (without the webhook delivery, recorded when it was parked), and when it goes. */
export type Parked = { id: string; envelope: EventEnvelope; expiresAt: number };

type Row = { id: string; envelope: string; expires_at: number };

export class ParkedEvents {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  add(envelope: EventEnvelope, expiresAt: number): void {
    this.sql.exec(
      "INSERT INTO parked (id, envelope, expires_at) VALUES (?, ?, ?)",
      envelope.id,
      JSON.stringify(envelope),
      expiresAt,
    );
  }

  byId(id: string): Parked | null {
    return this.many("SELECT * FROM parked WHERE id = ?", id)[0] ?? null;
  }

  /** In the order they came. */
  list(): Parked[] {
    return this.many("SELECT * FROM parked ORDER BY seq");
  }

  remove(id: string): void {
    this.sql.exec("DELETE FROM parked WHERE id = ?", id);
  }

  nextExpiry(): number | null {
    return this.sql.exec<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM parked").one().at ?? null;
  }

  private many(query: string, ...bindings: unknown[]): Parked[] {
    return this.sql
      .exec<Row>(query, ...bindings)
      .toArray()
      .map((row) => ({
        id: row.id,
        envelope: JSON.parse(row.envelope) as EventEnvelope,
        expiresAt: row.expires_at,
      }));
  }
}

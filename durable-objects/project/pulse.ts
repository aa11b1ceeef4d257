/**
 * The ProjectDO's pulse, for the factory's watchdog (src/domain/watchdog.ts): when its alarm last ran and when
 * a reconciliation cycle last completed. The watchdog reads it from outside, since a stopped alarm stops the
 * supervisor that would report it.
 */
import type { CycleOutcome } from "../../src/contracts/project-object.ts";
import type { ProjectPulse } from "../../src/domain/watchdog.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS pulse (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  since INTEGER NOT NULL,
  alarm_at INTEGER,
  reconciled_at INTEGER,
  reconcile_error TEXT
);
`;

export class Pulse {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
    sql.exec("INSERT OR IGNORE INTO pulse (id, since) VALUES (1, ?)", Date.now());
  }

  alarmRan(now: number): void {
    this.sql.exec("UPDATE pulse SET alarm_at = ? WHERE id = 1", now);
  }

  /** A cycle's outcome (null: none was due). */
  reconciled(outcome: CycleOutcome | null, now: number): void {
    if (outcome === null) return;
    if ("error" in outcome) this.sql.exec("UPDATE pulse SET reconcile_error = ? WHERE id = 1", outcome.error);
    else this.sql.exec("UPDATE pulse SET reconciled_at = ?, reconcile_error = NULL WHERE id = 1", now);
  }

  read(): ProjectPulse {
    const row = this.sql
      .exec<{
        since: number;
        alarm_at: number | null;
        reconciled_at: number | null;
        reconcile_error: string | null;
      }>("SELECT since, alarm_at, reconciled_at, reconcile_error FROM pulse WHERE id = 1")
      .one();
    return {
      since: row.since,
      alarmAt: row.alarm_at,
      reconciledAt: row.reconciled_at,
      reconcileError: row.reconcile_error,
    };
  }
}

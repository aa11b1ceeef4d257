/**
 * The ProjectDO's triage runs: which escalation of which issue a run of the triage agent answers. Its
 * `propose_step` is accepted only for that issue (src/agents/outputs.ts) and reaches the issue as a
 * `triage_proposal` for that escalation, which the issue refuses once it has moved on.
 */
import type { TriageBinding } from "../../../src/agents/triage-run.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS triage_runs (
  run_id TEXT PRIMARY KEY,
  number INTEGER NOT NULL,
  escalation INTEGER NOT NULL
);
`;

/** Thin typed access; every write method is meant to run inside `transactionSync`. */
export class TriageRuns {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  bind(runId: string, binding: TriageBinding): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO triage_runs (run_id, number, escalation) VALUES (?, ?, ?)",
      runId,
      binding.number,
      binding.escalation,
    );
  }

  of(runId: string): TriageBinding | null {
    const row = this.sql
      .exec<{ number: number; escalation: number }>(
        "SELECT number, escalation FROM triage_runs WHERE run_id = ?",
        runId,
      )
      .toArray()[0];
    return row ? { number: row.number, escalation: row.escalation } : null;
  }

  /** Forgets the bindings of runs the run records forgot. */
  prune(): void {
    this.sql.exec("DELETE FROM triage_runs WHERE run_id NOT IN (SELECT id FROM agent_runs)");
  }
}

/**
 * The ProjectDO's record of the agent runs forge events started: which agent, about which issue or pull
 * request, for which sender. What the trigger's decisions count (src/agents/event-runs.ts: a sender's runs in
 * the last hour, the same agent's earlier run on the same subject that a new one supersedes) and what the
 * event runs' own daily budget is measured by: the spend of their jobs (the job store's `spend` rows, whose
 * usage ids start with the job's id).
 */

import type { EventOrigin } from "../../../src/agents/event-runs.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS event_runs (
  run_id TEXT PRIMARY KEY,
  job_id TEXT NOT NULL,
  agent TEXT NOT NULL,
  number INTEGER NOT NULL,
  sender TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS event_runs_by_subject ON event_runs (agent, number);
CREATE INDEX IF NOT EXISTS event_runs_by_sender ON event_runs (sender, created_at);
CREATE INDEX IF NOT EXISTS event_runs_by_job ON event_runs (job_id);
`;

export class EventRuns {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** Inside the transaction that queued the run's job. */
  record(runId: string, jobId: string, origin: EventOrigin, now: number): void {
    this.sql.exec(
      `INSERT OR IGNORE INTO event_runs (run_id, job_id, agent, number, sender, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      runId,
      jobId,
      origin.agent,
      origin.number,
      origin.sender.toLowerCase(),
      now,
    );
  }

  /** The jobs of `agent`'s earlier event runs on `number` (the caller keeps those still queued). */
  jobsAbout(agent: string, number: number, except: string): string[] {
    return this.sql
      .exec<{ job_id: string }>(
        "SELECT job_id FROM event_runs WHERE agent = ? AND number = ? AND run_id <> ?",
        agent,
        number,
        except,
      )
      .toArray()
      .map((row) => row.job_id);
  }

  /** How many event runs `sender` started since `since`. */
  startedBy(sender: string, since: number): number {
    return this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM event_runs WHERE sender = ? AND created_at >= ?",
        sender.toLowerCase(),
        since,
      )
      .one().n;
  }

  isEventRun(runId: string): boolean {
    return this.sql.exec("SELECT 1 FROM event_runs WHERE run_id = ?", runId).toArray().length > 0;
  }

  /** What event runs spent on UTC day `day` (agent runs' spend is recorded under number 0). */
  daySpendUsd(day: string): number {
    return (
      this.sql
        .exec<{ usd: number | null }>(
          `SELECT SUM(usd) AS usd FROM spend
           WHERE day = ? AND number = 0
             AND substr(usage_id, 1, instr(usage_id, ':') - 1) IN (SELECT job_id FROM event_runs)`,
          day,
        )
        .one().usd ?? 0
    );
  }

  /** Forgets the runs queued before `before` (as finished jobs are forgotten). */
  prune(before: number): void {
    this.sql.exec("DELETE FROM event_runs WHERE created_at < ?", before);
  }
}

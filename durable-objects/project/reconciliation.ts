/**
 * The ProjectDO's reconciliation: its own project, on its own period, from the object's one alarm. Keeps the
 * listing's cursor, the conditional requests' ETags (so an unchanged answer is a free 304) and the rate-limit
 * budget the forge last reported, which spaces cycles out before effects run short.
 */

import type { CycleOutcome } from "../../src/contracts/project-object.ts";
import { waitUntil } from "../../src/domain/failure.ts";
import { type Budget, budgetFrom, type Cursor, nextCycleAt, START } from "../../src/domain/reconciliation.ts";
import type { Env } from "../../src/env.ts";
import { errorMessage } from "../../src/error-message.ts";
import type { CachedAnswer, ConditionalCache, ForgeAnswer } from "../../src/forge/client/http.ts";
import { log } from "../../src/log.ts";
import { lazyForges, loadProject } from "../../src/projects/store.ts";
import { reconcileCycle } from "../../src/reconcile/cycle.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS reconcile_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  project TEXT NOT NULL,
  next_at INTEGER,
  cursor TEXT NOT NULL,
  budget TEXT
);
CREATE TABLE IF NOT EXISTS reconcile_etags (
  url TEXT PRIMARY KEY,
  etag TEXT NOT NULL,
  body TEXT NOT NULL,
  link TEXT,
  total TEXT,
  used_at INTEGER NOT NULL
);
`;
/** An ETag unused this long (its issue went quiet or ended) is dropped. */
const ETAG_RETENTION_MS = 24 * 60 * 60_000;
/** A project whose cycle failed tries again after this, not a whole period later. */
const RETRY_MS = 30_000;

type StateRow = { project: string; next_at: number | null; cursor: string; budget: string | null };

export class Reconciliation {
  private readonly sql: SqlStorage;
  private running: Promise<CycleOutcome | null> | null = null;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    sql.exec(SCHEMA);
  }

  /**
   * Makes sure a cycle is scheduled for `project` (at `firstAt` when none is); returns when it is due. Cheap:
   * no forge, no D1.
   */
  arm(project: string, now: number, firstAt = now): number {
    const row = this.state();
    if (row && row.project !== project)
      throw new Error(`reconciliation of ${project} sent to ${row.project}`);
    if (row?.next_at != null) return row.next_at;
    this.sql.exec(
      `INSERT INTO reconcile_state (id, project, next_at, cursor) VALUES (1, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET next_at = excluded.next_at`,
      project,
      firstAt,
      JSON.stringify(START),
    );
    return firstAt;
  }

  /** When the alarm must next wake for a cycle; null when none is armed. */
  nextAt(): number | null {
    return this.state()?.next_at ?? null;
  }

  /**
   * Runs a cycle when one is due, or when `force`d; one at a time. A due check during a run joins it; a forced
   * one waits for it and runs its own, which sees everything up to the moment it was asked for.
   */
  async runIfDue(env: Env, now: number, force = false): Promise<CycleOutcome | null> {
    if (this.running) {
      if (!force) return this.running;
      await this.running;
      return this.runIfDue(env, Date.now(), force);
    }
    const row = this.state();
    if (!row || (!force && (row.next_at === null || row.next_at > now))) return null;
    // Claimed before the cycle starts: an object evicted mid-cycle runs it again then, not in a loop now.
    this.sql.exec("UPDATE reconcile_state SET next_at = ? WHERE id = 1", now + RETRY_MS);
    this.running = this.run(env, row, now).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(env: Env, row: StateRow, now: number): Promise<CycleOutcome | null> {
    let loadError: unknown;
    const project = await loadProject(env, row.project).catch((error: unknown) => {
      loadError = error;
      return undefined;
    });
    if (project === null) {
      // Deleted: nothing more to reconcile, and nothing keeps the alarm for it.
      this.sql.exec("DELETE FROM reconcile_state");
      this.sql.exec("DELETE FROM reconcile_etags");
      return null;
    }
    const periodMs = project?.settings.reconcile.periodMs ?? RETRY_MS;
    let budget: Budget | null = row.budget === null ? null : (JSON.parse(row.budget) as Budget);
    const meter = { calls: 0, notModified: 0 };
    const observe = ({ status, headers }: ForgeAnswer) => {
      if (status === 304) meter.notModified++;
      else meter.calls++;
      budget = budgetFrom(headers, Date.now()) ?? budget;
    };
    let outcome: CycleOutcome;
    let next: number;
    try {
      if (!project) throw new Error(`project could not be loaded: ${errorMessage(loadError)}`);
      const forges = lazyForges(env, project, { conditional: this.etags(now), observe });
      const cursor = JSON.parse(row.cursor) as Cursor;
      const done = await reconcileCycle(env, project, cursor, forges, now);
      this.sql.exec("UPDATE reconcile_state SET cursor = ? WHERE id = 1", JSON.stringify(done.cursor));
      outcome = { ...done.report, ...meter };
      next = nextCycleAt(Date.now(), periodMs, budget);
    } catch (error) {
      // One forge failing is this project's business only; the cycle runs again soon, or when the forge's
      // rate limit said it may.
      outcome = { project: row.project, error: errorMessage(error) };
      const retry = Math.max(Date.now() + RETRY_MS, waitUntil(error) ?? 0);
      next = Math.max(nextCycleAt(Date.now(), Math.min(periodMs, RETRY_MS), budget), retry);
    }
    this.sql.exec(
      "UPDATE reconcile_state SET next_at = ?, budget = ? WHERE id = 1",
      next,
      budget === null ? null : JSON.stringify(budget),
    );
    this.sql.exec("DELETE FROM reconcile_etags WHERE used_at < ?", now - ETAG_RETENTION_MS);
    log.info("reconciled", outcome);
    return outcome;
  }

  /** The conditional requests' answers, kept in the object's own storage across cycles. */
  private etags(now: number): ConditionalCache {
    const sql = this.sql;
    return {
      get(url) {
        const [row] = sql
          .exec<{ etag: string; body: string; link: string | null; total: string | null }>(
            "SELECT etag, body, link, total FROM reconcile_etags WHERE url = ?",
            url,
          )
          .toArray();
        if (!row) return undefined;
        sql.exec("UPDATE reconcile_etags SET used_at = ? WHERE url = ?", now, url);
        return row;
      },
      put(url, answer: CachedAnswer) {
        sql.exec(
          `INSERT INTO reconcile_etags (url, etag, body, link, total, used_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, body = excluded.body, link = excluded.link,
             total = excluded.total, used_at = excluded.used_at`,
          url,
          answer.etag,
          answer.body,
          answer.link,
          answer.total,
          now,
        );
      },
    };
  }

  private state(): StateRow | undefined {
    return this.sql
      .exec<StateRow>("SELECT project, next_at, cursor, budget FROM reconcile_state WHERE id = 1")
      .toArray()[0];
  }
}

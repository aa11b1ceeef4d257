/**
 * The ProjectDO's backfill of the mirror: every open issue and pull request of the repository, read page by
 * page from the forge's open listing into D1 (src/projects/mirror.ts), at registration and when the operator
 * asks. It reads only while the forge's rate limit leaves more than `BACKFILL_FLOOR` of the window, a few
 * pages per alarm, and keeps where it stands in the object's storage: a step the object lost is read again,
 * and a budget running low waits for the window's reset. The decisions are src/domain/backfill.ts's.
 */

import type { BackfillStatus } from "../../src/contracts/project-object.ts";
import { type Alert, backfillSource } from "../../src/domain/alerts.ts";
import {
  afterCheck,
  afterPage,
  backfillAlert,
  closedUnder,
  FIRST_PASS,
  PAGES_PER_STEP,
  type Pass,
  pageAllowance,
  refusalReason,
  refusedForGood,
  retryAt,
  STEP_GAP_MS,
} from "../../src/domain/backfill.ts";
import { failureOf, waitUntil } from "../../src/domain/failure.ts";
import { type Budget, budgetFrom } from "../../src/domain/reconciliation.ts";
import type { Env } from "../../src/env.ts";
import { errorMessage } from "../../src/error-message.ts";
import type { ForgeClient, UpdatedIssue } from "../../src/forge/client/index.ts";
import { log } from "../../src/log.ts";
import { toMirrored } from "../../src/projects/gate.ts";
import { mirrorIssues } from "../../src/projects/mirror.ts";
import { lazyForges, loadProject, type Project } from "../../src/projects/store.ts";
import { addColumns } from "../shared/columns.ts";
import type { Outbox } from "../shared/outbox.ts";
import { ALERTS_CHANNEL } from "./supervisor/alerts.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS backfill_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  project TEXT NOT NULL,
  phase TEXT NOT NULL,
  pass TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  next_at INTEGER,
  reason TEXT,
  failures INTEGER NOT NULL DEFAULT 0,
  budget TEXT,
  alerted INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS backfill_seen (number INTEGER PRIMARY KEY);
`;

const IDLE: BackfillStatus = {
  project: null,
  phase: "idle",
  pass: 0,
  page: 0,
  listed: 0,
  startedAt: null,
  finishedAt: null,
  nextAt: null,
  reason: null,
};

type Row = {
  project: string;
  phase: BackfillStatus["phase"];
  pass: string;
  started_at: number;
  finished_at: number | null;
  next_at: number | null;
  reason: string | null;
  failures: number;
  budget: string | null;
  /** The operator was told the forge refused it; told again once it reads a page. */
  alerted: number;
};

export class Backfill {
  private readonly sql: SqlStorage;
  private running: Promise<void> | null = null;

  constructor(
    sql: SqlStorage,
    private readonly outbox: Outbox,
  ) {
    this.sql = sql;
    addColumns(sql, "backfill_state", { alerted: "INTEGER NOT NULL DEFAULT 0" });
    sql.exec(SCHEMA);
  }

  /** Starts a backfill of `project` now, unless one is under way; its status either way. */
  start(project: string, now: number): BackfillStatus {
    const row = this.row();
    if (row && row.project !== project) throw new Error(`backfill of ${project} sent to ${row.project}`);
    if (row?.phase !== "running" && row?.phase !== "waiting") {
      this.sql.exec(
        `INSERT OR REPLACE INTO backfill_state (id, project, phase, pass, started_at, next_at, budget, alerted)
         VALUES (1, ?, 'running', ?, ?, ?, ?, ?)`,
        project,
        JSON.stringify(FIRST_PASS),
        now,
        now,
        row?.budget ?? null,
        row?.alerted ?? 0,
      );
      this.sql.exec("DELETE FROM backfill_seen");
    }
    return this.status();
  }

  status(): BackfillStatus {
    const row = this.row();
    if (!row) return IDLE;
    const pass = JSON.parse(row.pass) as Pass;
    return {
      project: row.project,
      phase: row.phase,
      pass: pass.pass,
      page: pass.page,
      listed: pass.listed,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
      nextAt: row.next_at,
      reason: row.reason,
    };
  }

  /** When the alarm must next wake for a step; null when none is due. */
  nextAt(): number | null {
    return this.row()?.next_at ?? null;
  }

  /** One step when one is due (or `force`d), one at a time: a call during a step joins it. */
  runIfDue(env: Env, now: number, force = false): Promise<void> {
    const row = this.row();
    if (this.running || !row || row.next_at === null || (!force && row.next_at > now)) {
      return this.running ?? Promise.resolve();
    }
    this.running = this.step(env, row).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async step(env: Env, row: Row): Promise<void> {
    const project = await loadProject(env, row.project).catch(() => undefined);
    if (project === null) {
      // Unregistered: nothing to backfill, and nothing keeps the alarm for it.
      this.sql.exec("DELETE FROM backfill_state");
      this.sql.exec("DELETE FROM backfill_seen");
      if (row.alerted) this.tell(row.project, []);
      return;
    }
    let budget: Budget | null = row.budget === null ? null : (JSON.parse(row.budget) as Budget);
    let pass = JSON.parse(row.pass) as Pass;
    // Once a step succeeds, a failure's reason is history; a pass's own (why it runs again) stays.
    const standing = row.failures > 0 ? null : row.reason;
    const save = (fields: Partial<Row>) => {
      const next = {
        ...row,
        ...fields,
        pass: JSON.stringify(pass),
        budget: budget && JSON.stringify(budget),
      };
      this.sql.exec(
        `UPDATE backfill_state SET phase = ?, pass = ?, finished_at = ?, next_at = ?, reason = ?, failures = ?,
           budget = ?, alerted = ? WHERE id = 1`,
        next.phase,
        next.pass,
        next.finished_at,
        next.next_at,
        next.reason,
        next.failures,
        next.budget,
        next.alerted,
      );
    };
    try {
      if (!project) throw new Error("the project could not be loaded");
      const observe = ({ headers }: { headers: Headers }) => {
        budget = budgetFrom(headers, Date.now()) ?? budget;
      };
      const forge = await lazyForges(env, project, { observe })();
      for (let read = 0; read < PAGES_PER_STEP; read++) {
        const allowance = pageAllowance(budget, Date.now());
        if (!allowance.ok) {
          save({ phase: "waiting", next_at: allowance.until, reason: allowance.reason, failures: 0 });
          return;
        }
        if (pass.page > 0) {
          pass = await this.readPage(env, project, forge, pass);
          this.answered(row);
          save({ phase: "running", failures: 0, reason: standing });
          continue;
        }
        const checked = await this.check(env, project, forge, pass);
        this.answered(row);
        if ("done" in checked) {
          save({
            phase: "done",
            finished_at: Date.now(),
            next_at: null,
            reason: checked.reason,
            failures: 0,
          });
          this.sql.exec("DELETE FROM backfill_seen");
          log.info("backfilled", { project: project.id, pass: pass.pass, listed: pass.listed });
          return;
        }
        pass = checked.next;
        save({ phase: "running", reason: checked.reason, failures: 0 });
      }
      save({ phase: "running", next_at: Date.now() + STEP_GAP_MS });
    } catch (error) {
      const failures = row.failures + 1;
      const failure = failureOf(error);
      if (refusedForGood(failure)) {
        // Asked again, it would say the same: stopped until the credentials change (src/api/projects.ts).
        const reason = refusalReason(failure);
        if (!row.alerted) this.tell(row.project, [backfillAlert(row.project, reason)]);
        save({ phase: "refused", next_at: null, reason, failures, alerted: 1 });
        log.warn("backfill refused", { project: row.project, error: failure.message });
        return;
      }
      const reason = `the forge failed (${failures} in a row): ${errorMessage(error)}`;
      save({ phase: "running", next_at: retryAt(Date.now(), failures, waitUntil(error)), reason, failures });
      log.warn("backfill step failed", { project: row.project, error: errorMessage(error) });
    }
  }

  /** The forge answered: an alert that it refused resolves (saved with the step). */
  private answered(row: Row): void {
    if (!row.alerted) return;
    this.tell(row.project, []);
    row.alerted = 0;
  }

  /** The backfill's alerts now, to the factory's AlertDO (sent with the supervisor's, ./supervisor/alerts.ts). */
  private tell(project: string, alerts: Alert[]): void {
    this.outbox.enqueue(ALERTS_CHANNEL, { source: backfillSource(project), alerts }, Date.now());
  }

  /** Reads the pass's next page into the mirror (a crash before its state is saved reads it again). */
  private async readPage(env: Env, project: Project, forge: ForgeClient, pass: Pass): Promise<Pass> {
    if (pass.page === 1) this.sql.exec("DELETE FROM backfill_seen");
    const page = await forge.listOpenPage(pass.page);
    await mirrorIssues(
      env,
      project.id,
      page.items.map((item) => toMirrored(project, item)),
    );
    for (const item of page.items)
      this.sql.exec("INSERT OR IGNORE INTO backfill_seen (number) VALUES (?)", item.number);
    return afterPage(
      pass,
      { count: page.items.length, more: page.more, forgeTime: page.forgeTime },
      Date.now(),
    );
  }

  /**
   * What changed since the pass began, into the mirror too; whether an item the pass listed closed under it
   * (the offset pages then stepped over one).
   */
  private async check(env: Env, project: Project, forge: ForgeClient, pass: Pass) {
    const { items } = await forge.listUpdatedSince(pass.from);
    await mirrorIssues(
      env,
      project.id,
      latest(items).map((item) => toMirrored(project, item)),
    );
    const seen = new Set(
      this.sql
        .exec<{ number: number }>("SELECT number FROM backfill_seen")
        .toArray()
        .map((r) => r.number),
    );
    return afterCheck(pass, closedUnder(pass, seen, items));
  }

  private row(): Row | undefined {
    return this.sql.exec<Row>("SELECT * FROM backfill_state WHERE id = 1").toArray()[0];
  }
}

/** A listing by update time may show an item twice: its latest version only. */
function latest(items: readonly UpdatedIssue[]): UpdatedIssue[] {
  const byNumber = new Map<number, UpdatedIssue>();
  for (const item of items) {
    const known = byNumber.get(item.number);
    if (!known || Date.parse(item.updatedAt) >= Date.parse(known.updatedAt)) byNumber.set(item.number, item);
  }
  return [...byNumber.values()];
}

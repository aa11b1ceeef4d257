/**
 * The ProjectDO's supervisor (issue 18, docs/supervisor.md): every `supervisor.periodMs`, from the object's
 * one alarm, it reads a snapshot of the project (./snapshot.ts), runs the pure checks
 * (src/domain/supervisor.ts), applies the safe remedies, and keeps the findings that stand. A finding new
 * this run opens one forge issue, one that resolved closes it; both through the object's outbox, written in
 * the transaction that records the findings, so each is applied once however often delivery is retried.
 *
 * The findings that alert (P0, P1, every runner finding) also go to the factory's AlertDO (./alerts.ts); with an
 * operator channel configured, a runner finding goes there only, not to the project's tracker.
 *
 * Lost leases need no remedy here: the ProjectDO's alarm expires them before the supervisor runs, and a job
 * still leased long past its lease is itself a finding (`lease_overdue`).
 */

import { configuredChannels } from "../../../src/alert-stub.ts";
import type { EnqueueRequest, Health, SupervisorRun } from "../../../src/contracts/project-object.ts";
import { onTracker, supervisorSource } from "../../../src/domain/alerts.ts";
import {
  type Finding,
  findingIssue,
  type OpenFinding,
  reconcileFindings,
  runChecks,
} from "../../../src/domain/supervisor.ts";
import type { Env } from "../../../src/env.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { log } from "../../../src/log.ts";
import { supervisorSettingsSchema } from "../../../src/projects/config.ts";
import { loadProject, type Project } from "../../../src/projects/store.ts";
import { addColumns } from "../../shared/columns.ts";
import { deliverInOrder, type Outbox } from "../../shared/outbox.ts";
import { ALERTS_CHANNEL, deliverAlerts, queueAlerts } from "./alerts.ts";
import { deliverSupervisorEffect, type SupervisorEffect } from "./forge-issues.ts";
import { applyRemedies } from "./remedies.ts";
import { gatherSnapshot, type OwnState } from "./snapshot.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS supervisor_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  project TEXT NOT NULL,
  next_at INTEGER,
  checked_at INTEGER,
  error TEXT
);
CREATE TABLE IF NOT EXISTS supervisor_findings (
  key TEXT PRIMARY KEY,
  finding TEXT NOT NULL,
  opened_at INTEGER NOT NULL,
  seen_at INTEGER NOT NULL,
  forge_issue INTEGER,
  tracked INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS supervisor_forge_issues (
  occurrence TEXT PRIMARY KEY,
  number INTEGER NOT NULL
);
`;
const ADDED_COLUMNS: Record<string, string> = {
  // Whether the finding opened a forge issue, the one to close when it resolves. Findings recorded before
  // this column may have: their issue is looked for, as it was then.
  tracked: "INTEGER NOT NULL DEFAULT 1",
};
/** The outbox channel of the supervisor's forge effects. */
export const SUPERVISOR_CHANNEL = "supervisor";

/** The supervisor's period until the project's settings say otherwise (its first check reads them). */
export const DEFAULT_SUPERVISOR_PERIOD_MS = supervisorSettingsSchema.parse({}).periodMs;
const CHANNELS = [SUPERVISOR_CHANNEL, ALERTS_CHANNEL];
/** A check that failed (D1 or the project unreadable) tries again after this. */
const RETRY_MS = 60_000;

/** What the supervisor needs of the ProjectDO it runs in. */
export type SupervisorHooks = {
  /** Its job queue and today's spend. */
  own(): OwnState;
  /** Queues a job (a remedy's reap), once per key. */
  enqueue(request: EnqueueRequest): Promise<{ jobId: string; created: boolean }>;
};

type StateRow = { project: string; next_at: number | null; checked_at: number | null; error: string | null };

export class Supervisor {
  private running: Promise<SupervisorRun | null> | null = null;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly outbox: Outbox,
  ) {
    addColumns(storage.sql, "supervisor_findings", ADDED_COLUMNS);
    storage.sql.exec(SCHEMA);
  }

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Makes sure a check is scheduled for `project` (one period from now when none is). Cheap: no D1. */
  arm(project: string, now: number, periodMs: number): number {
    const row = this.state();
    if (row?.next_at != null) return row.next_at;
    this.sql.exec(
      `INSERT INTO supervisor_state (id, project, next_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET next_at = excluded.next_at`,
      project,
      now + periodMs,
    );
    return now + periodMs;
  }

  /** When the alarm must next wake for a check or for a forge effect still to deliver. */
  nextAt(): number | null {
    const times = [this.state()?.next_at, this.outbox.nextOfEach(CHANNELS)].filter(
      (t): t is number => typeof t === "number",
    );
    return times.length === 0 ? null : Math.min(...times);
  }

  /**
   * Checks when due (or when `force`d), then delivers the forge effects that are due; one run at a time, a
   * due check during a run joins it. Never throws: a failed check is retried, a failed effect backs off.
   */
  runIfDue(env: Env, now: number, hooks: SupervisorHooks, force = false): Promise<SupervisorRun | null> {
    if (this.running) return this.running;
    const row = this.state();
    const due = row && (force || (row.next_at !== null && row.next_at <= now));
    const effectsDue = (this.outbox.nextOfEach(CHANNELS) ?? Number.POSITIVE_INFINITY) <= now;
    if (!due && !effectsDue) return Promise.resolve(null);
    // Claimed before the check starts: an object evicted mid-check checks again later, not in a loop now.
    if (due) this.sql.exec("UPDATE supervisor_state SET next_at = ? WHERE id = 1", now + RETRY_MS);
    this.running = (async () => {
      const run = due && row ? await this.check(env, row.project, now, hooks) : null;
      await this.deliver(env);
      return run;
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** The findings that stand, most urgent first, and when they were checked. */
  health(): Health {
    const row = this.state();
    const findings = this.sql
      .exec<{ finding: string; opened_at: number; forge_issue: number | null }>(
        "SELECT finding, opened_at, forge_issue FROM supervisor_findings",
      )
      .toArray()
      .map((r) => ({
        ...(JSON.parse(r.finding) as Finding),
        openedAt: r.opened_at,
        forgeIssue: r.forge_issue,
      }))
      .sort((a, b) => a.priority.localeCompare(b.priority) || a.key.localeCompare(b.key));
    return {
      project: row?.project ?? null,
      checkedAt: row?.checked_at ?? null,
      nextAt: row?.next_at ?? null,
      error: row?.error ?? null,
      findings,
    };
  }

  private async check(
    env: Env,
    projectId: string,
    now: number,
    hooks: SupervisorHooks,
  ): Promise<SupervisorRun> {
    try {
      const project = await loadProject(env, projectId);
      if (!project) {
        // Deleted: nothing keeps the alarm for it, and its forge is no longer Conveyor's to write to.
        this.storage.transactionSync(() => {
          this.sql.exec("DELETE FROM supervisor_state");
          this.sql.exec("DELETE FROM supervisor_findings");
          this.sql.exec("DELETE FROM supervisor_forge_issues");
          const waiting = this.outbox.due([SUPERVISOR_CHANNEL], Number.POSITIVE_INFINITY, 10_000);
          this.outbox.ack(waiting.map((row) => row.id));
          // Its alerts are resolved: nobody is left to resolve them later.
          this.outbox.enqueue(ALERTS_CHANNEL, { source: supervisorSource(projectId), alerts: [] }, now);
        });
        return { error: `project ${projectId} is not registered` };
      }
      const found = runChecks(await gatherSnapshot(env, project, hooks.own(), now));
      const settled = await applyRemedies(env, project, found, hooks);
      const findings = found.filter((f) => !settled.has(f.key));
      const operator = configuredChannels(env).length > 0;
      const { opened, resolved } = this.storage.transactionSync(() =>
        this.record(project, findings, Date.now(), operator),
      );
      const periodMs = project.settings.supervisor.periodMs;
      this.sql.exec(
        "UPDATE supervisor_state SET next_at = ?, checked_at = ?, error = NULL WHERE id = 1",
        Date.now() + periodMs,
        now,
      );
      log.info("supervised", {
        project: projectId,
        findings: findings.length,
        opened,
        resolved,
        settled: [...settled],
      });
      return { checkedAt: now, findings, opened, resolved };
    } catch (error) {
      // The claim above already set the retry.
      const message = errorMessage(error);
      this.sql.exec("UPDATE supervisor_state SET error = ? WHERE id = 1", message);
      log.warn("not supervised", { project: projectId, error: message });
      return { error: message };
    }
  }

  /**
   * Keeps the run's findings, and queues the forge issues of the new and the resolved ones and the project's
   * alerts. `operator`: an operator channel is configured, so runner findings open no forge issue. In a
   * transaction.
   */
  private record(project: Project, findings: Finding[], now: number, operator: boolean) {
    const rows = this.sql
      .exec<{ key: string; finding: string; opened_at: number; tracked: number }>(
        "SELECT key, finding, opened_at, tracked FROM supervisor_findings",
      )
      .toArray();
    const stood = rows.map(
      (r): OpenFinding => ({ ...(JSON.parse(r.finding) as Finding), openedAt: r.opened_at }),
    );
    const tracked = new Set(rows.filter((r) => r.tracked === 1).map((r) => r.key));
    const changes = reconcileFindings(stood, findings);
    queueAlerts(this.outbox, project.id, stood, findings, now);
    const { forgeIssues } = project.settings.supervisor;
    const label = project.settings.labels.supervisor;
    for (const finding of changes.opened) {
      const opens = forgeIssues && onTracker(finding, operator);
      this.sql.exec(
        "INSERT INTO supervisor_findings (key, finding, opened_at, seen_at, tracked) VALUES (?, ?, ?, ?, ?)",
        finding.key,
        JSON.stringify(finding),
        now,
        now,
        opens ? 1 : 0,
      );
      if (opens) {
        const issue = findingIssue(finding, { supervisor: label });
        this.enqueue({ kind: "open", key: finding.key, openedAt: now, issue, label }, now);
      }
    }
    for (const finding of changes.kept) {
      this.sql.exec(
        "UPDATE supervisor_findings SET finding = ?, seen_at = ? WHERE key = ?",
        JSON.stringify(finding),
        now,
        finding.key,
      );
    }
    for (const finding of changes.resolved) {
      this.sql.exec("DELETE FROM supervisor_findings WHERE key = ?", finding.key);
      // Only a finding that opened an issue has one to close (on the forge, a search by its marker when the
      // answer that named it was lost); one opened before the setting changed is closed all the same.
      if (!tracked.has(finding.key)) continue;
      const comment = `Resolved: the supervisor's check of ${new Date(now).toISOString()} no longer finds this.`;
      this.enqueue({ kind: "close", key: finding.key, openedAt: finding.openedAt, comment, label }, now);
    }
    return { opened: changes.opened.map((f) => f.key), resolved: changes.resolved.map((f) => f.key) };
  }

  private enqueue(effect: SupervisorEffect, now: number): void {
    this.outbox.enqueue(SUPERVISOR_CHANNEL, effect, now);
  }

  /** Delivers the due forge effects in order; a failure backs off (the alarm comes back for it). */
  private async deliver(env: Env, horizon?: number): Promise<void> {
    await deliverAlerts(this.storage, this.outbox, env, horizon);
    const project = this.state()?.project;
    if (!project) return;
    await deliverInOrder(
      this.storage,
      this.outbox,
      [SUPERVISOR_CHANNEL],
      1,
      async (rows) => {
        for (const row of rows) {
          const effect = JSON.parse(row.payload) as SupervisorEffect;
          const occurrence = `${effect.key}:${effect.openedAt}`;
          const number = await deliverSupervisorEffect(env, project, effect, this.forgeIssue(occurrence));
          if (number === null) continue;
          this.storage.transactionSync(() => {
            this.sql.exec(
              "INSERT OR REPLACE INTO supervisor_forge_issues (occurrence, number) VALUES (?, ?)",
              occurrence,
              number,
            );
            this.sql.exec(
              "UPDATE supervisor_findings SET forge_issue = ? WHERE key = ? AND opened_at = ?",
              number,
              effect.key,
              effect.openedAt,
            );
            // Closed: nothing will look it up again.
            if (effect.kind === "close")
              this.sql.exec("DELETE FROM supervisor_forge_issues WHERE occurrence = ?", occurrence);
          });
        }
      },
      horizon,
    );
  }

  /** Delivers every forge effect waiting, backoffs included (tests, operators). */
  drain(env: Env): Promise<void> {
    return this.deliver(env, Number.POSITIVE_INFINITY);
  }

  private forgeIssue(occurrence: string): number | null {
    const row = this.sql
      .exec<{ number: number }>("SELECT number FROM supervisor_forge_issues WHERE occurrence = ?", occurrence)
      .toArray()[0];
    return row?.number ?? null;
  }

  private state(): StateRow | undefined {
    return this.sql
      .exec<StateRow>("SELECT project, next_at, checked_at, error FROM supervisor_state WHERE id = 1")
      .toArray()[0];
  }
}

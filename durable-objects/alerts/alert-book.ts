/**
 * The factory's open alerts and who stands behind each (src/domain/alerts.ts decides): a report from a source
 * opens, refreshes and resolves, and each alert opened or resolved writes one message per configured channel
 * into the outbox, in the same transaction, so it is told once however often the report is sent again. A
 * resolved alert is kept (the newest RESOLVED_KEPT) for the operator to read when and why it was open.
 */
import type { AlertChannel } from "../../src/alert-stub.ts";
import type { Retire } from "../../src/contracts/alert-object.ts";
import { confirmReport, type Streak } from "../../src/domain/alert-streaks.ts";
import {
  type AlertMessage,
  type OpenAlert,
  RESOLVED_KEPT,
  type ResolvedAlert,
  reportChanges,
  type SourceReport,
} from "../../src/domain/alerts.ts";
import type { Outbox } from "../shared/outbox.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS alerts (
  key TEXT PRIMARY KEY,
  alert TEXT NOT NULL,
  sources TEXT NOT NULL,
  opened_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS resolved_alerts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  alert TEXT NOT NULL,
  sources TEXT NOT NULL,
  opened_at INTEGER NOT NULL,
  resolved_at INTEGER NOT NULL,
  resolved_by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS alert_streaks (
  source TEXT NOT NULL,
  key TEXT NOT NULL,
  first_at INTEGER NOT NULL,
  looks INTEGER NOT NULL,
  PRIMARY KEY (source, key)
);
`;

export class AlertBook {
  constructor(
    private readonly sql: SqlStorage,
    private readonly outbox: Outbox,
  ) {
    sql.exec(SCHEMA);
  }

  /** Applies each report in turn; in the caller's transaction. */
  report(reports: readonly SourceReport[], channels: readonly AlertChannel[], now: number) {
    const opened: string[] = [];
    const resolved: string[] = [];
    for (const reported of reports) {
      const open = this.open();
      const report = this.confirmed(reported, new Set(open.map((a) => a.alert.key)), now);
      const changes = reportChanges(open, report);
      for (const alert of changes.opened) {
        this.sql.exec(
          "INSERT INTO alerts (key, alert, sources, opened_at) VALUES (?, ?, ?, ?)",
          alert.key,
          JSON.stringify(alert),
          JSON.stringify([report.source]),
          now,
        );
        this.tell(channels, { kind: "opened", alert, openedAt: now, at: now });
        opened.push(alert.key);
      }
      for (const { alert, sources } of changes.kept) {
        this.sql.exec(
          "UPDATE alerts SET alert = ?, sources = ? WHERE key = ?",
          JSON.stringify(alert),
          JSON.stringify(sources),
          alert.key,
        );
      }
      for (const { alert, sources, openedAt } of changes.resolved) {
        this.sql.exec("DELETE FROM alerts WHERE key = ?", alert.key);
        this.sql.exec(
          "INSERT INTO resolved_alerts (alert, sources, opened_at, resolved_at, resolved_by) VALUES (?, ?, ?, ?, ?)",
          JSON.stringify(alert),
          JSON.stringify(sources),
          openedAt,
          now,
          report.source,
        );
        this.tell(channels, { kind: "resolved", alert, openedAt, at: now });
        resolved.push(alert.key);
      }
    }
    if (resolved.length > 0)
      this.sql.exec(
        "DELETE FROM resolved_alerts WHERE id <= (SELECT id FROM resolved_alerts ORDER BY id DESC LIMIT 1 OFFSET ?)",
        RESOLVED_KEPT,
      );
    return { opened, resolved };
  }

  /** The report's alerts that stand (src/domain/alert-streaks.ts), its source's streaks kept for the next. */
  private confirmed(report: SourceReport, open: ReadonlySet<string>, now: number) {
    const before = this.sql
      .exec<{ key: string; first_at: number; looks: number }>(
        "SELECT key, first_at, looks FROM alert_streaks WHERE source = ?",
        report.source,
      )
      .toArray()
      .map((r): [string, Streak] => [r.key, { key: r.key, firstAt: r.first_at, looks: r.looks }]);
    const confirmed = confirmReport(report, open, new Map(before), now);
    this.sql.exec("DELETE FROM alert_streaks WHERE source = ?", report.source);
    for (const streak of confirmed.streaks) {
      this.sql.exec(
        "INSERT INTO alert_streaks (source, key, first_at, looks) VALUES (?, ?, ?, ?)",
        report.source,
        streak.key,
        streak.firstAt,
        streak.looks,
      );
    }
    return confirmed.report;
  }

  /** Empty reports from the sources `retire` says are gone. */
  retired({ prefix, keep }: Retire): SourceReport[] {
    const kept = new Set(keep);
    // A source with a streak and no alert open yet is gone as well: its streak goes with it.
    const streaking = this.sql
      .exec<{ source: string }>("SELECT DISTINCT source FROM alert_streaks")
      .toArray()
      .map((r) => r.source);
    const gone = new Set(
      [...this.open().flatMap((a) => a.sources), ...streaking].filter(
        (s) => s.startsWith(prefix) && !kept.has(s),
      ),
    );
    return [...gone].map((source) => ({ source, alerts: [] }));
  }

  /** The open alerts, most urgent first. */
  open(): OpenAlert[] {
    return this.sql
      .exec<{ alert: string; sources: string; opened_at: number }>(
        "SELECT alert, sources, opened_at FROM alerts",
      )
      .toArray()
      .map((r) => ({
        alert: JSON.parse(r.alert) as OpenAlert["alert"],
        sources: JSON.parse(r.sources) as string[],
        openedAt: r.opened_at,
      }))
      .sort(
        (a, b) => a.alert.priority.localeCompare(b.alert.priority) || a.alert.key.localeCompare(b.alert.key),
      );
  }

  /** The resolved alerts kept, newest first. */
  resolved(): ResolvedAlert[] {
    return this.sql
      .exec<{ alert: string; sources: string; opened_at: number; resolved_at: number; resolved_by: string }>(
        "SELECT alert, sources, opened_at, resolved_at, resolved_by FROM resolved_alerts ORDER BY id DESC",
      )
      .toArray()
      .map((r) => ({
        alert: JSON.parse(r.alert) as ResolvedAlert["alert"],
        sources: JSON.parse(r.sources) as string[],
        openedAt: r.opened_at,
        resolvedAt: r.resolved_at,
        resolvedBy: r.resolved_by,
      }));
  }

  private tell(channels: readonly AlertChannel[], message: AlertMessage): void {
    for (const channel of channels) this.outbox.enqueue(channel, message, message.at);
  }
}

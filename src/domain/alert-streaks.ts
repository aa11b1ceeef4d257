/**
 * Alerts that open only once their cause persists. One failed call to a project's object is a blip (a deploy,
 * an object moving); the watchdog says so only when it fails look after look. Each such alert keeps a streak
 * per source: when it was first reported in a row, and how many reports in a row carried it. A report without
 * it ends the streak, and resolves it if it had opened: the first success.
 */
import type { Alert, ReportedAlert, SourceReport } from "./alerts.ts";

export type Streak = { key: string; firstAt: number; looks: number };

/**
 * The report as the alert book applies it: the alerts that stand (those without `confirm`, those already open,
 * those confirmed now), with `confirm` left out; and the source's streaks after it.
 */
export function confirmReport(
  report: SourceReport,
  open: ReadonlySet<string>,
  streaks: ReadonlyMap<string, Streak>,
  now: number,
): { report: { source: string; alerts: Alert[] }; streaks: Streak[] } {
  const alerts: Alert[] = [];
  const next: Streak[] = [];
  for (const { confirm, ...alert } of report.alerts) {
    if (!confirm) {
      alerts.push(alert);
      continue;
    }
    const before = streaks.get(alert.key);
    const streak = before
      ? { key: alert.key, firstAt: before.firstAt, looks: before.looks + 1 }
      : { key: alert.key, firstAt: now, looks: 1 };
    next.push(streak);
    if (open.has(alert.key) || persists(streak, confirm, now)) alerts.push(alert);
  }
  return { report: { source: report.source, alerts }, streaks: next };
}

function persists(streak: Streak, confirm: NonNullable<ReportedAlert["confirm"]>, now: number): boolean {
  return streak.looks >= confirm.looks || now - streak.firstAt >= confirm.ms;
}

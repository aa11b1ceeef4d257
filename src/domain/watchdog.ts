/**
 * The factory's watchdog (issue 30, docs/supervisor.md#the-watchdog): the supervisor runs on the ProjectDO alarm
 * it would have to report on, so the cron looks at each ProjectDO from outside — when its alarm last ran, when
 * its reconciliation last completed — and alerts on one that stopped. Pure: src/cron/watchdog.ts gathers the
 * pulses and hands the alerts to the AlertDO.
 */
import type { Alert, ReportedAlert } from "./alerts.ts";

/** What a ProjectDO tells the watchdog about itself (durable-objects/project/pulse.ts). */
export type ProjectPulse = {
  /** When its alarm last ran; null before the first. */
  alarmAt: number | null;
  /** When a reconciliation cycle last completed without error; null before the first. */
  reconciledAt: number | null;
  /** The last cycle's error, when it failed. */
  reconcileError: string | null;
  /** When the object first kept a pulse: the start of its silence when nothing ran since. */
  since: number;
};

/** What the watchdog knows of one project: its periods, and its pulse or why it could not be read. */
export type Watched = {
  project: string;
  supervisorPeriodMs: number;
  reconcilePeriodMs: number;
  pulse: ProjectPulse | { error: string };
};

/** Slack before an alarm or a cycle counts as stopped: a wake-up may be late by a retry or two. */
export const WATCHDOG_GRACE_MS = 5 * 60_000;
/** A cycle may be spaced out to the forge's rate-limit reset (at most an hour): not a stop. */
const RATE_LIMIT_SPACING_MS = 60 * 60_000;

/**
 * How long a project's alarm may stay silent: it wakes at least every supervisor period (the supervisor always
 * has a next check), so two periods missed and the grace.
 */
export const alarmSilenceMs = (w: Pick<Watched, "supervisorPeriodMs">) =>
  2 * w.supervisorPeriodMs + WATCHDOG_GRACE_MS;

/** How long without a completed cycle is a stopped reconciliation: three periods, or the rate limit's spacing. */
export const reconcileSilenceMs = (w: Pick<Watched, "reconcilePeriodMs">) =>
  Math.max(3 * w.reconcilePeriodMs, RATE_LIMIT_SPACING_MS) + WATCHDOG_GRACE_MS;

/**
 * An object that does not answer is alerted on once it failed this many looks in a row (ten minutes at a look
 * every five), or failed for this long (a project looked at less often, past the cron's window): one failed
 * call is a blip, a deploy or an object moving. Its first answer resolves the alert.
 */
export const UNREACHABLE_CONFIRM = { looks: 3, ms: 15 * 60_000 };

/** The alerts the watchdog stands behind for one project (none: it is alive). */
export function watchdogAlerts(w: Watched, now: number): ReportedAlert[] {
  const key = (what: string) => `watchdog:${w.project}:${what}`;
  if ("error" in w.pulse) {
    return [
      {
        key: key("unreachable"),
        priority: "P1",
        title: `${w.project}: its Durable Object does not answer the watchdog`,
        text: `${w.pulse.error}\nNothing of this project runs while its object fails: look at the Worker's logs.`,
        confirm: UNREACHABLE_CONFIRM,
      },
    ];
  }
  const { alarmAt, reconciledAt, reconcileError, since } = w.pulse;
  const alerts: Alert[] = [];
  const alarmSilent = now - (alarmAt ?? since);
  if (alarmSilent > alarmSilenceMs(w)) {
    alerts.push({
      key: key("alarm"),
      priority: "P1",
      title: `${w.project}: the project's alarm stopped (${ago(alarmSilent)} since it last ran)`,
      text:
        "Its timers, leases, reconciliation and supervisor all run on that alarm: nothing moves and nothing is " +
        "reported for this project until it runs again. Look at the Worker's logs for the object's errors.",
    });
  }
  const reconcileSilent = now - (reconciledAt ?? since);
  if (reconcileSilent > reconcileSilenceMs(w)) {
    alerts.push({
      key: key("reconciliation"),
      priority: "P1",
      title: `${w.project}: reconciliation stopped (${ago(reconcileSilent)} since a cycle completed)`,
      text: reconcileError
        ? `The last cycle failed: ${reconcileError}`
        : "No cycle has run since: a lost webhook is not recovered until one does.",
    });
  }
  return alerts;
}

function ago(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  return minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
}

/**
 * When a scheduled agent runs. The ProjectDO keeps, per agent, the scheduled time its last run was queued
 * for; at each alarm a run is due when a scheduled time has passed since. However many times passed (the
 * Worker or every runner was down), that is one run: an hourly agent down for a day runs once, not 24 times.
 */
import { cronOf } from "./definition.ts";

export type ScheduleDecision = {
  /** Queue one run now. */
  run: boolean;
  /** What to keep as the last scheduled time. */
  last: number;
  /** When the next scheduled time comes: the alarm for this agent; null if the expression has no more. */
  next: number | null;
};

/**
 * `last`: the scheduled time of the last run queued; null for an agent never scheduled before, which starts
 * with the next scheduled time rather than one in the past.
 */
export function scheduleDecision(expression: string, last: number | null, now: number): ScheduleDecision {
  const cron = cronOf(expression);
  const next = cron.nextRun(new Date(now))?.getTime() ?? null;
  // The latest scheduled time at or before now.
  const slot = cron.previousRuns(1, new Date(now + 1))[0]?.getTime() ?? now;
  if (last === null) return { run: false, last: slot, next };
  return slot > last ? { run: true, last: slot, next } : { run: false, last, next };
}

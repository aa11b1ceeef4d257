/**
 * The window an outcomes report covers: whole UTC days, `from` to `to` inclusive, as the API's `?from&to`
 * (YYYY-MM-DD), the dashboard and `conveyor outcomes` take them. Default: the last 30 days, today included.
 */
import { z } from "zod";

export const DAY_MS = 86_400_000;

/** The report's tables, each one CSV: a row per day, the time per state, the escalations' causes. */
export const OUTCOME_TABLES = ["days", "waiting", "causes"] as const;
export type OutcomeTable = (typeof OUTCOME_TABLES)[number];
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 366;

export type Window = {
  /** UTC day numbers (days since the epoch), both included. */
  firstDay: number;
  lastDay: number;
  /** The same, as milliseconds: [fromMs, toMs). */
  fromMs: number;
  toMs: number;
};

export const dayNumber = (ms: number) => Math.floor(ms / DAY_MS);
export const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "a date is YYYY-MM-DD (UTC)")
  .refine((text) => !Number.isNaN(Date.parse(`${text}T00:00:00Z`)), "not a date")
  .transform((text) => dayNumber(Date.parse(`${text}T00:00:00Z`)));

/** `?from&to`, both optional; an unknown key is refused rather than ignored (a typo would read as a default). */
export const windowQuerySchema = z.strictObject({
  from: date.optional(),
  to: date.optional(),
  format: z.enum(["json", "csv"]).optional(),
  table: z.enum(OUTCOME_TABLES).optional(),
});

/** The window from a parsed query, or why it is not one. */
export function windowOf(
  query: { from?: number | undefined; to?: number | undefined },
  now: number,
): Window | { error: string } {
  const lastDay = query.to ?? (query.from === undefined ? dayNumber(now) : query.from + DEFAULT_DAYS - 1);
  const firstDay = query.from ?? lastDay - DEFAULT_DAYS + 1;
  if (firstDay > lastDay) return { error: `from (${isoDay(firstDay)}) is after to (${isoDay(lastDay)})` };
  if (lastDay - firstDay + 1 > MAX_DAYS) return { error: `a window is at most ${MAX_DAYS} days` };
  return { firstDay, lastDay, fromMs: firstDay * DAY_MS, toMs: (lastDay + 1) * DAY_MS };
}

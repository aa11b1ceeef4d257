/**
 * Reconciliation's pure decisions: which listed issues changed since the last cycle (and where the next
 * listing starts), and when the next cycle may run given what the forge says is left of its rate limit.
 */

/** Where the next listing starts: `since`, and the items already seen at exactly that time. */
export type Cursor = {
  /** The forge's own time of the latest change seen (never this machine's clock); null before the first. */
  since: string | null;
  /** Fingerprint per number of the items updated at exactly `since`: listed again, they are not news. */
  seen: Record<string, string>;
};

export const START: Cursor = { since: null, seen: {} };

export type Listed = { number: number; updatedAt: string; fingerprint: string };

/**
 * How long after the end of a second the forge's clock must be before that second counts as closed: its
 * `Date` header is rounded down to the second, and a write may reach the listing a moment after its stamp.
 */
export const BOUNDARY_SETTLE_MS = 2_000;

/**
 * The items that changed since `cursor`, and the cursor after them. Forges compare `since` inclusively and
 * count time in seconds, so the items at the boundary are listed again: one seen with the same fingerprint is
 * skipped, one changed again within the same second is not. The listing's order does not matter.
 *
 * `forgeTime` is the forge's clock when it answered (its `Date` header). Once it is past the boundary's second
 * (by `BOUNDARY_SETTLE_MS`), nothing more can be written into that second: the next listing starts after it,
 * so a second in which many items changed at once (a bulk label) is not listed again on every change.
 */
export function changesSince(
  cursor: Cursor,
  listed: readonly Listed[],
  forgeTime: number | null = null,
): { changed: number[]; next: Cursor } {
  const changed = listed.filter(
    (item) => cursor.seen[item.number] !== item.fingerprint || !atBoundary(cursor, item),
  );
  const times = listed.map((item) => Date.parse(item.updatedAt)).filter((t) => !Number.isNaN(t));
  const sinceMs = cursor.since === null ? Number.NEGATIVE_INFINITY : Date.parse(cursor.since);
  // Nothing listed: nothing to move past (a cursor that starts after a closed second stays there).
  if (times.length === 0) return { changed: unique(changed), next: cursor };
  const latest = Math.max(sinceMs, ...times);
  const secondEnd = Math.floor(latest / 1000) * 1000 + 1000;
  if (times.includes(latest) && forgeTime !== null && forgeTime >= secondEnd + BOUNDARY_SETTLE_MS) {
    return { changed: unique(changed), next: { since: forgeIso(secondEnd), seen: {} } };
  }
  const since = latest === sinceMs && cursor.since !== null ? cursor.since : isoOf(listed, latest);
  const seen: Record<string, string> = {};
  for (const item of listed) {
    if (Date.parse(item.updatedAt) === latest) seen[item.number] = item.fingerprint;
  }
  // Nothing newer than the boundary: the boundary's items stay seen (a quiet listing returns just them).
  if (latest === sinceMs) Object.assign(seen, { ...cursor.seen, ...seen });
  return { changed: unique(changed), next: { since, seen } };
}

const atBoundary = (cursor: Cursor, item: Listed) =>
  cursor.since !== null && Date.parse(item.updatedAt) === Date.parse(cursor.since);

const unique = (items: readonly Listed[]) => [...new Set(items.map((item) => item.number))];

/** The forge's own spelling of the latest time, so the next `since` is exactly what it sent. */
const isoOf = (listed: readonly Listed[], at: number) =>
  listed.find((item) => Date.parse(item.updatedAt) === at)?.updatedAt ?? new Date(at).toISOString();

/** A whole second as forges write it (no milliseconds). */
const forgeIso = (at: number) => new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");

/** What the forge's rate-limit headers said last. */
export type Budget = { limit: number; remaining: number; resetAt: number };

/** The share of the hourly budget reconciliation leaves to effects (labels, comments, reviews, merges). */
export const EFFECTS_RESERVE = 0.2;
/** Below this share left, cycles space out in proportion to what is left. */
export const SLOW_DOWN_BELOW = 0.5;

/**
 * When the next cycle may start. With plenty left, one period on. Past `SLOW_DOWN_BELOW` the period grows as
 * the budget shrinks; at the reserve, reconciliation waits for the window to reset, leaving the rest to effects.
 * Never later than the reset plus one period: a new window always brings a cycle.
 */
export function nextCycleAt(now: number, periodMs: number, budget: Budget | null): number {
  const regular = now + periodMs;
  if (budget === null || budget.limit <= 0) return regular;
  const latest = Math.max(regular, budget.resetAt + periodMs);
  const share = budget.remaining / budget.limit;
  if (share <= EFFECTS_RESERVE) return latest;
  if (share >= SLOW_DOWN_BELOW) return regular;
  const stretch = (SLOW_DOWN_BELOW - EFFECTS_RESERVE) / (share - EFFECTS_RESERVE);
  return Math.min(latest, now + periodMs * stretch);
}

/** The budget an answer's headers report (GitHub's `x-ratelimit-*`, reset in epoch seconds); null without. */
export function budgetFrom(headers: Headers, now: number): Budget | null {
  const limit = Number(headers.get("x-ratelimit-limit"));
  const remaining = Number(headers.get("x-ratelimit-remaining"));
  if (!headers.has("x-ratelimit-remaining") || !Number.isFinite(limit) || !Number.isFinite(remaining))
    return null;
  const reset = Number(headers.get("x-ratelimit-reset"));
  const resetAt = Number.isFinite(reset) && reset > 0 ? reset * 1000 : now + 60 * 60_000;
  return { limit, remaining, resetAt };
}

/**
 * At most this many projects per cron invocation, well under the platform's subrequest limit (1 000). Alarms
 * are durable and registration arms its project's, so the cron is a net: past this many, each invocation arms
 * the next window in turn and every project is looked at within a few minutes.
 */
export const MAX_ARMS_PER_INVOCATION = 500;

/** The `turn`-th invocation's share of `all`: everything when it fits, else the next window, wrapping round. */
export function armingTurn<T>(all: readonly T[], turn: number, size = MAX_ARMS_PER_INVOCATION): T[] {
  if (all.length <= size) return [...all];
  const start = (turn * size) % all.length;
  return [...all.slice(start, start + size), ...all.slice(0, Math.max(0, start + size - all.length))];
}

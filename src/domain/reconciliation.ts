/**
 * Reconciliation's pure decisions: which listed issues changed since the last cycle (and where the next
 * listing starts, so that no change is ever passed over), and when the next cycle may run given what the forge
 * says is left of its rate limit.
 */

/** Where the next listing starts: `since`, and what was already seen at or after it. */
export type Cursor = {
  /** A whole second of the forge's own clock (never this machine's); null before the first listing. */
  since: string | null;
  /** Fingerprint per number of the items listed at or after `since`: listed again unchanged, they are not news. */
  seen: Record<string, string>;
  /** Per number, cycles in a row its reads failed (`afterFailures`): the cursor waits for it. */
  failing?: Record<string, number>;
};

export const START: Cursor = { since: null, seen: {} };

export type Listed = { number: number; updatedAt: string; fingerprint: string };

/**
 * How long after a second the forge's clock must be before that second counts as closed: its `Date` header is
 * rounded down to the second, and a write may reach the listing a moment after its stamp.
 */
export const BOUNDARY_SETTLE_MS = 2_000;

/**
 * What a listing since `cursor` shows changed (the latest version of each item, in the listing's order), and
 * the cursor after it.
 *
 * The next `since` never passes what every later write is sure to be listed from:
 * - the forge's clock at the listing's first page (`forgeTime`, its `Date`) less `BOUNDARY_SETTLE_MS`, whole
 *   seconds: a write stamped earlier had reached the listing when it started, later ones may not have (an
 *   issue opened mid-listing lands on a page of Gitea's newest-first listing already read; a write stamped
 *   before a newer item may show after it);
 * - the second after the newest item listed (nothing newer exists yet);
 * - `heldAt`, a time the listing itself may have slid past (see `listByUpdate`).
 * Items listed at or after the next `since` are remembered by fingerprint, so listed again unchanged (forges
 * compare `since` inclusively and count in seconds) they are not news, while one changed again is. Listed
 * twice (keyset pages overlap), an item counts once, in its latest version.
 */
export function changesSince<T extends Listed>(
  cursor: Cursor,
  listed: readonly T[],
  forgeTime: number | null = null,
  heldAt: string | null = null,
): { changed: T[]; next: Cursor } {
  const items = [...latestByNumber(listed).values()];
  const changed = items.filter((item) => cursor.seen[item.number] !== item.fingerprint);
  const times = items.map(stampOf).filter((t) => !Number.isNaN(t));
  // Nothing listed: nothing to move past (and an unchanged `since` keeps the listing a free 304).
  if (times.length === 0) return { changed, next: cursor };
  const newest = Math.max(...times);
  // Without a `Date`, the newest stamp is the latest the forge's clock is known to have reached.
  const clock = forgeTime ?? newest;
  const held = heldAt === null ? Number.POSITIVE_INFINITY : Date.parse(heldAt);
  const bound = Math.min(wholeSecond(newest) + 1000, wholeSecond(clock - BOUNDARY_SETTLE_MS), held);
  const sinceMs = cursor.since === null ? Number.NEGATIVE_INFINITY : Date.parse(cursor.since);
  const nextMs = Math.max(sinceMs, bound);
  const since = nextMs === sinceMs ? cursor.since : forgeIso(nextMs);
  const seen: Record<string, string> = {};
  for (const item of items) if (stampOf(item) >= nextMs) seen[item.number] = item.fingerprint;
  return { changed, next: { since, seen } };
}

/** Cycles in a row an item's reads may fail before the cursor moves past it; its next change brings it back. */
export const MAX_FAILING_CYCLES = 10;

/**
 * The cursor after a cycle in which the reads of some listed items failed (`failed`, by number; a rate limit
 * is no such failure, it ends the whole cycle): it stays where the cycle's listing started, and those items
 * are not remembered as seen, so the next listing shows them changed again and they are read again as that
 * cycle would have read them (a review heard from where its listing started). The others it lists again are
 * seen: not news. An item failing for the `MAX_FAILING_CYCLES`-th time in a row is given up: remembered as
 * seen, the cursor moves on without it, and a later change lists it again. Nothing failed: `changesSince`'s.
 */
export function afterFailures<T extends Listed>(
  start: Cursor & { since: string },
  listed: readonly T[],
  forgeTime: number | null,
  heldAt: string | null,
  failed: ReadonlySet<number>,
): { next: Cursor; givenUp: number[] } {
  const failing: Record<string, number> = {};
  const givenUp: number[] = [];
  const isListed = new Set(listed.map((item) => item.number));
  for (const number of failed) {
    // Only the listing brings an item back: one it did not show (the first cycle's backlog) waits for its change.
    if (!isListed.has(number)) continue;
    const cycles = (start.failing?.[number] ?? 0) + 1;
    if (cycles >= MAX_FAILING_CYCLES) givenUp.push(number);
    else failing[number] = cycles;
  }
  const holding = Object.keys(failing).length > 0;
  const { next } = changesSince(start, listed, forgeTime, holding ? start.since : heldAt);
  const { failing: _, ...cursor } = next;
  if (!holding) return { next: cursor, givenUp };
  const seen = Object.fromEntries(Object.entries(cursor.seen).filter(([number]) => !(number in failing)));
  return { next: { since: start.since, seen, failing }, givenUp };
}

const stampOf = (item: Listed) => Date.parse(item.updatedAt);

/** The latest version of each item (ties: the one listed last), in the order each was first listed. */
function latestByNumber<T extends Listed>(listed: readonly T[]): Map<number, T> {
  const latest = new Map<number, T>();
  for (const item of listed) {
    const known = latest.get(item.number);
    if (!known || !(stampOf(item) < stampOf(known))) latest.set(item.number, item);
  }
  return latest;
}

const wholeSecond = (at: number) => Math.floor(at / 1000) * 1000;

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

/**
 * The mirror's backfill, its pure decisions: whether the next page of the open listing may be read within the
 * forge's rate limit, what one page does to the pass, and whether a finished pass may have stepped over an
 * open item (the listing pages by offset) and must run again.
 */
import { type BackoffPolicy, backoffDelay } from "./backoff.ts";
import { BOUNDARY_SETTLE_MS, type Budget, SLOW_DOWN_BELOW } from "./reconciliation.ts";

/**
 * The backfill reads only while more than this share of the hourly budget is left: below it reconciliation
 * starts to space its cycles out, and effects keep their reserve (`EFFECTS_RESERVE`) untouched.
 */
export const BACKFILL_FLOOR = SLOW_DOWN_BELOW;
/** Pages one alarm reads before it hands the object back; the next step follows `STEP_GAP_MS` later. */
export const PAGES_PER_STEP = 10;
export const STEP_GAP_MS = 1_000;
/** Passes over the listing at most: one more for each pass an item closed under. */
export const MAX_PASSES = 3;
/** A step the forge failed tries again after this, doubling to a quarter of an hour. */
export const FAILURE_BACKOFF: BackoffPolicy = { baseMs: 30_000, maxMs: 15 * 60_000, jitter: 0 };

export type BackfillPhase = "idle" | "running" | "waiting" | "done";

/** Where a pass stands: the page to read next, or (page 0) the check that it read every open item. */
export type Pass = {
  pass: number;
  page: number;
  /** Items mirrored by this pass. */
  listed: number;
  /** The forge's clock, a whole second, a settle before the pass's first page: changes since are checked. */
  from: string | null;
  /** The forge's clock at the pass's last page read (null: it sent no `Date`). */
  end: number | null;
};

export const FIRST_PASS: Pass = { pass: 1, page: 1, listed: 0, from: null, end: null };

/** Whether a page may be read now; if not, until when the budget is too low, and why. */
export function pageAllowance(
  budget: Budget | null,
  now: number,
): { ok: true } | { ok: false; until: number; reason: string } {
  if (budget === null || budget.limit <= 0) return { ok: true };
  // A window that has reset since: the next answer tells the new budget.
  if (budget.resetAt <= now) return { ok: true };
  if (budget.remaining / budget.limit > BACKFILL_FLOOR) return { ok: true };
  const reason = `the forge's rate limit: ${budget.remaining} of ${budget.limit} requests left, at most ${Math.round(
    BACKFILL_FLOOR * 100,
  )} % for the backfill; it goes on when the window resets`;
  return { ok: false, until: budget.resetAt, reason };
}

/** The pass after one page: its items mirrored, the next page, or the check once the listing ended. */
export function afterPage(
  pass: Pass,
  page: { count: number; more: boolean; forgeTime: number | null },
  now: number,
): Pass {
  const first = pass.page === 1;
  const from = first ? wholeSecondIso((page.forgeTime ?? now) - BOUNDARY_SETTLE_MS) : pass.from;
  return {
    pass: pass.pass,
    page: page.more ? pass.page + 1 : 0,
    listed: (first ? 0 : pass.listed) + page.count,
    from,
    end: page.forgeTime,
  };
}

export type Changed = {
  number: number;
  state: "open" | "closed";
  updatedAt: string;
  closedAt: string | null;
};

/**
 * The items the pass had listed that closed before its last page was read: each moved the later pages of
 * the offset listing back by one, so the item that then stood first on the next page was read by no page.
 */
export function closedUnder(pass: Pass, seen: ReadonlySet<number>, changed: readonly Changed[]): number[] {
  // The `Date` header is the second, rounded down: a change stamped within it may have come before.
  const end = pass.end === null ? Number.POSITIVE_INFINITY : pass.end + 1_000;
  return changed
    .filter((item) => item.state === "closed" && seen.has(item.number))
    .filter((item) => Date.parse(item.closedAt ?? item.updatedAt) < end)
    .map((item) => item.number);
}

/** After the check: another pass, or done (with why it stopped short, past `MAX_PASSES`). */
export function afterCheck(
  pass: Pass,
  closed: readonly number[],
): { next: Pass; reason: string } | { done: true; reason: string | null } {
  if (closed.length === 0) return { done: true, reason: null };
  const names = closed.map((n) => `#${n}`).join(", ");
  if (pass.pass >= MAX_PASSES)
    return {
      done: true,
      reason: `${names} closed while pass ${pass.pass} read the listing: an open item may be missed until it changes`,
    };
  return {
    next: { ...FIRST_PASS, pass: pass.pass + 1 },
    reason: `${names} closed while pass ${pass.pass} read the listing: reading it again`,
  };
}

/** When a step that failed (the `failures`-th in a row) runs again: the forge's own wait when it named one. */
export function retryAt(now: number, failures: number, forgeWait: number | null): number {
  return Math.max(now + backoffDelay(failures, FAILURE_BACKOFF), forgeWait ?? 0);
}

const wholeSecondIso = (at: number) =>
  new Date(Math.floor(at / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * The mirror's backfill, its pure decisions: whether the next page of the open listing may be read within the
 * forge's rate limit, what one page does to the pass, and whether a finished pass may have stepped over an
 * open item (the listing pages by offset) and must run again.
 */
import type { Alert } from "./alerts.ts";
import { type BackoffPolicy, backoffDelay } from "./backoff.ts";
import type { FailureShape } from "./failure.ts";
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

export type BackfillPhase = "idle" | "running" | "waiting" | "done" | "refused";

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

/**
 * Answers that say the same on every retry: the token is wrong or lost its rights, the repository is gone. A
 * rate limit (GitHub's 403 with its wait, a 429) names when to come back, and a 5xx may pass: those back off.
 */
const REFUSED_FOR_GOOD = new Set([401, 403, 404, 410]);

export function refusedForGood(failure: FailureShape): boolean {
  return failure.status !== undefined && REFUSED_FOR_GOOD.has(failure.status);
}

/** What a project's forge is reached with: a refused backfill waits for it to change. */
export type Credentials = { forge: string; apiUrl: string; repo: string; token: string };

export const credentialsOf = (
  where: { forge: string; apiUrl: string; repo: string },
  token: string,
): Credentials => ({ forge: where.forge, apiUrl: where.apiUrl, repo: where.repo, token });

export const credentialsChanged = (before: Credentials, after: Credentials): boolean =>
  before.forge !== after.forge ||
  before.apiUrl.replace(/\/$/, "") !== after.apiUrl.replace(/\/$/, "") ||
  before.repo.toLowerCase() !== after.repo.toLowerCase() ||
  before.token !== after.token;

/** Why a backfill stopped, for its status and the operator. */
export const refusalReason = (failure: FailureShape) =>
  `the forge refused for good (${failure.status}): ${failure.message}. The backfill resumes when the ` +
  "project is registered again with other credentials (a new token, or the repository's new place).";

/** The operator's alert while a project's backfill is refused: told once, resolved when a page is read again. */
export const backfillAlert = (project: string, reason: string): Alert => ({
  key: `backfill:${project}:refused`,
  priority: "P2",
  title: `${project}: the forge refuses the mirror's backfill`,
  text: `${reason}\nThe mirror lacks what was open before Conveyor came until it does.`,
});

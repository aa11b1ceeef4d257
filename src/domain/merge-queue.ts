/**
 * A project's merge queue (docs/lifecycle.md, "Staying current with the base"). Every merge makes the other
 * open pull requests behind their base; if each brought itself up to date on its own, every update would be
 * outdated again by the next merge, and the work would grow with the square of the open pull requests. So
 * merges take turns, in the order they first asked: the head of the queue holds the turn from its merge's
 * check, through the forge's update of its branch, its CI and the critic, to its merge, and no other issue of
 * the project merges meanwhile. The others wait in `merging`, without updating. Pure: plain state in, plain
 * state out; the ProjectDO applies and persists it (durable-objects/project/merge-queue.ts).
 */
import type { State } from "./lifecycle.ts";
import type { Timeouts } from "./timers.ts";

/**
 * An issue in the queue. `since`: the seq (in the history) of the edge whose merge asked, so that a
 * release decided before it (delivered late, from another outbox lane) does not take the issue out again.
 * `holdMs`: how long it may hold the turn (`turnBoundMs`).
 */
export type QueueEntry = { number: number; since: number; joinedAt: number; holdMs: number };

/** In order of asking; the first holds the turn, since `heldSince` (null exactly when the queue is empty). */
export type MergeQueue = { entries: readonly QueueEntry[]; heldSince: number | null };

export const EMPTY_QUEUE: MergeQueue = { entries: [], heldSince: null };

/** Where an issue stands: holding the turn, or waiting with `ahead` issues before it. */
export type Place = { holds: boolean; ahead: number; heldSince: number };

/** What a release or an expiry changed: the issue that now holds the turn and must be told, if any. */
export type Handover = { queue: MergeQueue; woken: number | null };

/** The states an issue holding the turn passes through: the merge's check, its update's CI, the critic. */
export const MERGE_PATH: readonly State[] = ["merging", "awaiting_ci", "awaiting_review"];

/**
 * Whether an edge takes the issue off the merge path (merged, revising, escalated, abandoned, held for a
 * human): it leaves the queue, and the turn if it held it. An issue that never asked is not in the queue,
 * and its release changes nothing.
 */
export const leavesMergePath = (from: State, to: State): boolean =>
  MERGE_PATH.includes(from) && !MERGE_PATH.includes(to);

/**
 * How long a holder may keep the turn without merging or releasing it: its CI and its review, each within
 * its own timer, after the update its turn may need. The issue's own timers end those waits sooner; this
 * is the backstop for a holder whose release was lost.
 */
export const turnBoundMs = (timeouts: Pick<Timeouts, "ci" | "review">): number =>
  timeouts.ci + timeouts.review;

export function placeOf(queue: MergeQueue, number: number): Place | null {
  const ahead = queue.entries.findIndex((e) => e.number === number);
  if (ahead === -1 || queue.heldSince === null) return null;
  return { holds: ahead === 0, ahead, heldSince: queue.heldSince };
}

/**
 * Whether `now`, the place as the queue answers where its merge acts, is the turn `held` it got before:
 * it still holds it, since the same moment. A turn lost in between and got again (the queue emptied meanwhile)
 * is another: merges of the turns in between may have moved the base under what the merge read.
 */
export const sameTurn = (held: Place, now: Place): boolean => now.holds && now.heldSince === held.heldSince;

/**
 * Issue `number`'s merge asks for the turn: it joins at the back unless it is already in the queue (a retry,
 * or the holder back in `merging` after its update's CI and review), where it keeps its place.
 */
export function join(
  queue: MergeQueue,
  ask: { number: number; since: number; holdMs: number },
  now: number,
): { queue: MergeQueue; place: Place } {
  const at = queue.entries.findIndex((e) => e.number === ask.number);
  const entries =
    at === -1
      ? [...queue.entries, { ...ask, joinedAt: now }]
      : queue.entries.map((e, i) =>
          i === at ? { ...e, since: Math.max(e.since, ask.since), holdMs: ask.holdMs } : e,
        );
  const next = { entries, heldSince: queue.heldSince ?? now };
  const place = placeOf(next, ask.number);
  if (!place) throw new Error(`issue #${ask.number} joined the merge queue but has no place in it`);
  return { queue: next, place };
}

/**
 * Issue `number` left the merge path at the edge of seq `since`: out of the queue, and the next holds the
 * turn. A release decided before the issue last asked is stale: it asked again after it, and stays.
 */
export function leave(queue: MergeQueue, number: number, since: number, now: number): Handover {
  const at = queue.entries.findIndex((e) => e.number === number);
  const entry = queue.entries[at];
  if (!entry || entry.since > since) return { queue, woken: null };
  return without(queue, at, now);
}

/** When the holder's turn runs out (its `holdMs` after it got it); null while nobody holds it. */
export function expiresAt(queue: MergeQueue): number | null {
  const holder = queue.entries[0];
  return holder && queue.heldSince !== null ? queue.heldSince + holder.holdMs : null;
}

/** A holder past its bound loses the turn (and its place: asking again, it joins at the back). */
export function expire(queue: MergeQueue, now: number): Handover & { expired: QueueEntry | null } {
  const due = expiresAt(queue);
  const holder = queue.entries[0];
  if (due === null || !holder || due > now) return { queue, woken: null, expired: null };
  return { ...without(queue, 0, now), expired: holder };
}

/**
 * Why the merge timer's check must wait instead of asking the forge whether the merge went through: the issue
 * still waits for the turn, or it got the turn after waiting, less than the `merge` timeout ago. The timer
 * counts from entering `merging`, and a long queue is no merge gone unanswered. Null: ask the forge.
 */
export function mergeCheckWaits(queue: MergeQueue, number: number, now: number, mergeMs: number) {
  const place = placeOf(queue, number);
  if (!place) return null;
  if (!place.holds) return `waits for its turn to merge: ${place.ahead} ahead in the merge queue`;
  const waited = (queue.entries[0]?.joinedAt ?? place.heldSince) < place.heldSince;
  return waited && now - place.heldSince < mergeMs
    ? "it got its turn to merge less than the merge timeout ago"
    : null;
}

/**
 * Whether the review's check brings a branch that is behind its base up to date first. Not while other issues
 * hold or wait for the turn: they merge before this one's turn, which then updates it and has it reviewed again,
 * so an update now would only be outdated. With the queue empty, or holding the turn, the update is what merges.
 * A conflict is resolved before the review either way.
 */
export const updatesBeforeReview = (queue: MergeQueue, number: number): boolean =>
  queue.entries.length === 0 || queue.entries[0]?.number === number;

function without(queue: MergeQueue, at: number, now: number): Handover {
  const entries = queue.entries.filter((_, i) => i !== at);
  const next = entries[0];
  if (!next) return { queue: EMPTY_QUEUE, woken: null };
  // Only the holder's leaving hands the turn on; a waiting issue's leaves the holder's time as it was.
  return at === 0
    ? { queue: { entries, heldSince: now }, woken: next.number }
    : { queue: { entries, heldSince: queue.heldSince }, woken: null };
}

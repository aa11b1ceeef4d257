import { describe, expect, it } from "vitest";
import { STATES } from "../../src/domain/lifecycle.ts";
import {
  EMPTY_QUEUE,
  expire,
  expiresAt,
  join,
  leave,
  leavesMergePath,
  MERGE_PATH,
  type MergeQueue,
  mergeCheckWaits,
  placeOf,
  sameTurn,
  turnBoundMs,
  updatesBeforeReview,
} from "../../src/domain/merge-queue.ts";

const HOLD = 60_000;
const ask = (number: number, since = 1, holdMs = HOLD) => ({ number, since, holdMs });

/** Issues `numbers` asked in this order, a second apart from t=1000. */
function queued(...numbers: number[]): MergeQueue {
  let queue = EMPTY_QUEUE;
  for (const [i, n] of numbers.entries()) queue = join(queue, ask(n), 1_000 * (i + 1)).queue;
  return queue;
}

const order = (queue: MergeQueue) => queue.entries.map((e) => e.number);

describe("joining the merge queue", () => {
  it("the first to ask holds the turn from then", () => {
    const { queue, place } = join(EMPTY_QUEUE, ask(7), 5_000);
    expect(place).toEqual({ holds: true, ahead: 0, heldSince: 5_000 });
    expect(queue.entries).toEqual([{ number: 7, since: 1, joinedAt: 5_000, holdMs: HOLD }]);
  });

  it("later ones wait at the back, in the order they asked", () => {
    const { queue, place } = join(queued(7, 8), ask(9), 9_000);
    expect(place).toEqual({ holds: false, ahead: 2, heldSince: 1_000 });
    expect(order(queue)).toEqual([7, 8, 9]);
  });

  it("asking again keeps the place, with the later edge's seq and the project's bound as it is now", () => {
    const before = queued(7, 8);
    const { queue, place } = join(before, ask(8, 12, 5_000), 20_000);
    expect(place).toEqual({ holds: false, ahead: 1, heldSince: 1_000 });
    expect(queue.entries[1]).toEqual({ number: 8, since: 12, joinedAt: 2_000, holdMs: 5_000 });
    // An older retry lowers nothing.
    expect(join(queue, ask(8, 3, 5_000), 21_000).queue.entries[1]?.since).toBe(12);
  });

  it("the holder asking again (back in merging after its update) still holds, its time unchanged", () => {
    const { place } = join(queued(7, 8), ask(7, 30), 50_000);
    expect(place).toEqual({ holds: true, ahead: 0, heldSince: 1_000 });
  });
});

describe("leaving the merge queue", () => {
  it("the holder leaving hands the turn to the next, from now", () => {
    const { queue, woken } = leave(queued(7, 8, 9), 7, 5, 40_000);
    expect(woken).toBe(8);
    expect(order(queue)).toEqual([8, 9]);
    expect(placeOf(queue, 8)).toEqual({ holds: true, ahead: 0, heldSince: 40_000 });
  });

  it("a waiting issue leaving wakes nobody and leaves the holder's time as it was", () => {
    const { queue, woken } = leave(queued(7, 8, 9), 8, 5, 40_000);
    expect(woken).toBeNull();
    expect(order(queue)).toEqual([7, 9]);
    expect(queue.heldSince).toBe(1_000);
  });

  it("the last one leaving empties it", () => {
    expect(leave(queued(7), 7, 5, 40_000)).toEqual({ queue: EMPTY_QUEUE, woken: null });
  });

  it("an issue not in it changes nothing", () => {
    const before = queued(7, 8);
    expect(leave(before, 9, 5, 40_000)).toEqual({ queue: before, woken: null });
  });

  it("a release decided before the issue last asked is stale: it asked again after leaving the path", () => {
    const before = join(queued(7, 8), ask(7, 10), 5_000).queue;
    expect(leave(before, 7, 9, 40_000)).toEqual({ queue: before, woken: null });
    expect(leave(before, 7, 11, 40_000).woken).toBe(8);
  });
});

describe("the backstop: a holder that neither merges nor releases", () => {
  it("runs out its bound after it got the turn", () => {
    expect(expiresAt(EMPTY_QUEUE)).toBeNull();
    expect(expiresAt(queued(7, 8))).toBe(1_000 + HOLD);
  });

  it("keeps the turn until then", () => {
    const before = queued(7, 8);
    expect(expire(before, 1_000 + HOLD - 1)).toEqual({ queue: before, woken: null, expired: null });
    expect(expire(EMPTY_QUEUE, 1e12)).toEqual({ queue: EMPTY_QUEUE, woken: null, expired: null });
  });

  it("then loses it and its place; the next holds the turn from then, for its own bound", () => {
    const at = 1_000 + HOLD;
    const { queue, woken, expired } = expire(queued(7, 8), at);
    expect(expired?.number).toBe(7);
    expect(woken).toBe(8);
    expect(order(queue)).toEqual([8]);
    expect(expiresAt(queue)).toBe(at + HOLD);
  });

  it("a lone holder that runs out leaves the queue empty", () => {
    expect(expire(queued(7), 1e12)).toEqual({
      queue: EMPTY_QUEUE,
      woken: null,
      expired: expect.objectContaining({ number: 7 }),
    });
  });

  it("is the holder's CI and review timers together", () => {
    expect(turnBoundMs({ ci: 3_600_000, review: 10_800_000 })).toBe(14_400_000);
  });
});

describe("the merge acts under the turn it got", () => {
  /** Issue 7's merge got the turn at t=1000 (8 behind it); `meanwhile` happens while it reads the forge. */
  function actsAfter(meanwhile: (queue: MergeQueue) => MergeQueue, at = 1_000 + HOLD + 5_000) {
    const first = join(queued(7, 8), ask(7), 1_500).place;
    const now = join(meanwhile(queued(7, 8)), ask(7), at).place;
    return sameTurn(first, now);
  }

  it("while it holds that turn: asked again where it writes, it still holds it since the same moment", () => {
    expect(actsAfter((queue) => queue, 30_000)).toBe(true);
  });

  it("not once its bound ran out meanwhile: the next holds the turn, and it asks again from the back", () => {
    expect(actsAfter((queue) => expire(queue, 1_000 + HOLD).queue)).toBe(false);
  });

  it("not once its release was delivered meanwhile (it moved on): the next holds the turn", () => {
    expect(actsAfter((queue) => leave(queue, 7, 5, 30_000).queue, 31_000)).toBe(false);
  });

  it("not under a later turn of its own: it lost the turn, the next merged and left, and it holds again", () => {
    const emptied = (queue: MergeQueue) => {
      const lost = expire(queue, 1_000 + HOLD).queue;
      return leave(lost, 8, 9, 1_000 + HOLD + 2_000).queue;
    };
    expect(actsAfter(emptied)).toBe(false);
  });

  it("never while it waits", () => {
    const waiting = join(queued(7, 8), ask(8), 1_500).place;
    expect(sameTurn(waiting, waiting)).toBe(false);
  });
});

describe("the merge path", () => {
  it("is left by every edge from merging, CI or the review to any other state, and only by those", () => {
    for (const from of STATES)
      for (const to of STATES)
        expect(leavesMergePath(from, to), `${from} -> ${to}`).toBe(
          MERGE_PATH.includes(from) && !MERGE_PATH.includes(to),
        );
    expect(leavesMergePath("merging", "merged")).toBe(true);
    expect(leavesMergePath("awaiting_ci", "revising")).toBe(true);
    expect(leavesMergePath("merging", "awaiting_approval")).toBe(true);
    expect(leavesMergePath("merging", "awaiting_ci")).toBe(false);
    expect(leavesMergePath("awaiting_review", "merging")).toBe(false);
    expect(leavesMergePath("awaiting_approval", "merging")).toBe(false);
  });
});

describe("a place in the queue", () => {
  it("is null for an issue not in it, and for an empty queue", () => {
    expect(placeOf(EMPTY_QUEUE, 7)).toBeNull();
    expect(placeOf(queued(7), 8)).toBeNull();
  });
});

describe("the merge timer's check", () => {
  const MERGE = 30 * 60_000;

  it("asks the forge for an issue not in the queue", () => {
    expect(mergeCheckWaits(queued(7), 8, 1e9, MERGE)).toBeNull();
  });

  it("waits while the issue waits for its turn", () => {
    expect(mergeCheckWaits(queued(7, 8, 9), 9, 1e9, MERGE)).toBe(
      "waits for its turn to merge: 2 ahead in the merge queue",
    );
  });

  it("asks the forge for a holder that got the turn when it asked: its merge is overdue", () => {
    expect(mergeCheckWaits(queued(7), 7, 1_001, MERGE)).toBeNull();
  });

  it("waits for a holder that got the turn after waiting, until the merge timeout has passed since", () => {
    const { queue } = leave(queued(7, 8), 7, 5, 600_000);
    expect(mergeCheckWaits(queue, 8, 600_000 + MERGE - 1, MERGE)).toBe(
      "it got its turn to merge less than the merge timeout ago",
    );
    expect(mergeCheckWaits(queue, 8, 600_000 + MERGE, MERGE)).toBeNull();
  });
});

describe("the review's update of a branch only behind its base", () => {
  it("happens with the queue empty, or for the holder: what it updates is what merges", () => {
    expect(updatesBeforeReview(EMPTY_QUEUE, 7)).toBe(true);
    expect(updatesBeforeReview(queued(7, 8), 7)).toBe(true);
  });

  it("waits for the issue's own turn while others hold or wait for it: they merge first", () => {
    expect(updatesBeforeReview(queued(8), 7)).toBe(false);
    expect(updatesBeforeReview(queued(8, 7), 7)).toBe(false);
  });
});

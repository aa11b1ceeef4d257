import { describe, expect, it } from "vitest";
import {
  afterFailures,
  armingTurn,
  BOUNDARY_SETTLE_MS,
  budgetFrom,
  type Cursor,
  changesSince,
  MAX_FAILING_CYCLES,
  nextCycleAt,
  START,
} from "../../src/domain/reconciliation.ts";

const item = (number: number, updatedAt: string, fingerprint = `f${number}`) => ({
  number,
  updatedAt,
  fingerprint,
});

const at = (iso: string) => Date.parse(iso);
const numbers = (result: { changed: { number: number }[] }) => result.changed.map((entry) => entry.number);

describe("changesSince", () => {
  it("takes everything on the first listing; the next starts after the newest second once it settled", () => {
    const listed = [item(1, "2026-01-01T00:00:01Z"), item(2, "2026-01-01T00:00:03Z")];
    const result = changesSince(START, listed, at("2026-01-01T00:01:00Z"));
    expect(numbers(result)).toEqual([1, 2]);
    expect(result.next).toEqual({ since: "2026-01-01T00:00:04Z", seen: {} });
  });

  it("never starts the next listing later than the forge's clock less the settling time", () => {
    const listed = [item(1, "2026-01-01T00:00:01Z"), item(2, "2026-01-01T00:00:09Z")];
    // The listing began at :10; a write stamped :08 or :09 may not have reached it yet.
    const { next } = changesSince(START, listed, at("2026-01-01T00:00:10Z"));
    expect(next).toEqual({ since: "2026-01-01T00:00:08Z", seen: { 2: "f2" } });
  });

  it("skips what it listed at or after its start unchanged; sees an item changed again by its fingerprint", () => {
    const cursor: Cursor = { since: "2026-01-01T00:00:08Z", seen: { 2: "f2", 3: "f3" } };
    const listed = [item(2, "2026-01-01T00:00:09Z"), item(3, "2026-01-01T00:00:09Z", "other")];
    const result = changesSince(cursor, listed, at("2026-01-01T00:00:10Z"));
    expect(numbers(result)).toEqual([3]);
    expect(result.next).toEqual({ since: "2026-01-01T00:00:08Z", seen: { 2: "f2", 3: "other" } });
  });

  it("keeps the cursor (and its free 304) while nothing is listed", () => {
    const cursor: Cursor = { since: "2026-01-01T00:00:04Z", seen: {} };
    expect(changesSince(cursor, [], at("2026-01-01T01:00:00Z"))).toEqual({ changed: [], next: cursor });
  });

  it("moves past a quiet boundary once the forge's clock has settled past it", () => {
    const cursor: Cursor = { since: "2026-01-01T00:00:03Z", seen: { 2: "f2" } };
    const listed = [item(2, "2026-01-01T00:00:03Z")];
    expect(changesSince(cursor, listed, at("2026-01-01T00:00:04Z") + BOUNDARY_SETTLE_MS - 1000)).toEqual({
      changed: [],
      next: cursor,
    });
    expect(changesSince(cursor, listed, at("2026-01-01T00:00:04Z") + BOUNDARY_SETTLE_MS)).toEqual({
      changed: [],
      next: { since: "2026-01-01T00:00:04Z", seen: {} },
    });
  });

  it("counts an item listed twice (overlapping pages) once, in its latest version", () => {
    const listed = [item(5, "2026-01-01T00:00:01Z", "old"), item(6, "2026-01-01T00:00:02Z")];
    listed.push(item(5, "2026-01-01T00:00:05Z", "new"));
    const result = changesSince(START, listed, at("2026-01-01T00:01:00Z"));
    expect(result.changed).toEqual([item(5, "2026-01-01T00:00:05Z", "new"), item(6, "2026-01-01T00:00:02Z")]);
  });

  it("never passes a time the listing may have slid past", () => {
    const listed = [item(1, "2026-01-01T00:00:03Z"), item(2, "2026-01-01T00:00:30Z")];
    const { next } = changesSince(START, listed, at("2026-01-01T00:05:00Z"), "2026-01-01T00:00:03Z");
    expect(next).toEqual({ since: "2026-01-01T00:00:03Z", seen: { 1: "f1", 2: "f2" } });
  });

  it("never moves back, whatever the forge's clock says", () => {
    const cursor: Cursor = { since: "2026-01-01T00:10:00Z", seen: {} };
    const { next } = changesSince(cursor, [item(1, "2026-01-01T00:10:00Z")], at("2026-01-01T00:00:00Z"));
    expect(next).toEqual({ since: "2026-01-01T00:10:00Z", seen: { 1: "f1" } });
  });

  it("without the forge's clock, bounds the cursor by the newest stamp less the settling time", () => {
    const { next } = changesSince(START, [item(1, "2026-01-01T00:00:09Z")], null);
    expect(next).toEqual({ since: "2026-01-01T00:00:07Z", seen: { 1: "f1" } });
  });
});

describe("afterFailures", () => {
  const start = { since: "2026-01-01T00:00:00Z", seen: {} };
  const listed = [item(1, "2026-01-01T00:00:01Z"), item(2, "2026-01-01T00:00:03Z")];
  const clock = at("2026-01-01T00:01:00Z");

  it("with nothing failed, moves on as changesSince does (and keeps no failures)", () => {
    const { next, givenUp } = afterFailures({ ...start, failing: { 1: 3 } }, listed, clock, null, new Set());
    expect(next).toEqual(changesSince(start, listed, clock).next);
    expect(givenUp).toEqual([]);
  });

  it("stays where the listing started and forgets the failed item, so the next listing shows only it changed", () => {
    const { next } = afterFailures(start, listed, clock, null, new Set([1]));
    expect(next).toEqual({ since: start.since, seen: { 2: "f2" }, failing: { 1: 1 } });
    expect(numbers(changesSince(next, listed, clock))).toEqual([1]);
  });

  it("counts the cycles an item fails in a row; one that reads again is dropped", () => {
    const failing = { ...start, failing: { 1: 2, 2: 4 } };
    const { next } = afterFailures(failing, listed, clock, null, new Set([1]));
    expect(next.failing).toEqual({ 1: 3 });
  });

  it(`gives an item up at its ${MAX_FAILING_CYCLES}th failure in a row: seen, the cursor moves on`, () => {
    const failing = { ...start, failing: { 1: MAX_FAILING_CYCLES - 1 } };
    const { next, givenUp } = afterFailures(failing, listed, clock, null, new Set([1]));
    expect(givenUp).toEqual([1]);
    expect(next).toEqual(changesSince(start, listed, clock).next);
  });

  it("holds nothing for a failed item the listing did not show (the first cycle's backlog)", () => {
    const { next } = afterFailures(start, listed, clock, null, new Set([7]));
    expect(next).toEqual(changesSince(start, listed, clock).next);
  });
});

describe("nextCycleAt", () => {
  const now = 1_000_000;
  const period = 60_000;
  const budget = (remaining: number) => ({ limit: 5000, remaining, resetAt: now + 30 * 60_000 });

  it("runs one period on without budget news or with plenty left", () => {
    expect(nextCycleAt(now, period, null)).toBe(now + period);
    expect(nextCycleAt(now, period, budget(5000))).toBe(now + period);
    expect(nextCycleAt(now, period, budget(2500))).toBe(now + period);
  });

  it("spaces cycles out as the budget shrinks below half", () => {
    const a = nextCycleAt(now, period, budget(2000));
    const b = nextCycleAt(now, period, budget(1500));
    expect(a).toBeGreaterThan(now + period);
    expect(b).toBeGreaterThan(a);
    expect(b).toBeLessThanOrEqual(now + 30 * 60_000 + period);
  });

  it("leaves the reserve to effects: waits for the window's reset", () => {
    expect(nextCycleAt(now, period, budget(1000))).toBe(now + 30 * 60_000 + period);
    expect(nextCycleAt(now, period, budget(0))).toBe(now + 30 * 60_000 + period);
  });
});

describe("budgetFrom", () => {
  it("reads GitHub's headers, reset in epoch seconds", () => {
    const headers = new Headers({
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4990",
      "x-ratelimit-reset": "1800000000",
    });
    expect(budgetFrom(headers, 0)).toEqual({ limit: 5000, remaining: 4990, resetAt: 1_800_000_000_000 });
  });

  it("is null when the forge sends none", () => {
    expect(budgetFrom(new Headers(), 0)).toBeNull();
  });
});

describe("armingTurn", () => {
  const ids = Array.from({ length: 7 }, (_, i) => i);

  it("takes every project when they fit", () => {
    expect(armingTurn(ids, 12, 10)).toEqual(ids);
  });

  it("takes the next window each turn, wrapping, so every project comes round", () => {
    expect(armingTurn(ids, 0, 3)).toEqual([0, 1, 2]);
    expect(armingTurn(ids, 1, 3)).toEqual([3, 4, 5]);
    expect(armingTurn(ids, 2, 3)).toEqual([6, 0, 1]);
    const seen = new Set([0, 1, 2, 3].flatMap((turn) => armingTurn(ids, turn, 3)));
    expect(seen.size).toBe(ids.length);
  });
});

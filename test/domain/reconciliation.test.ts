import { describe, expect, it } from "vitest";
import {
  armingTurn,
  BOUNDARY_SETTLE_MS,
  budgetFrom,
  type Cursor,
  changesSince,
  nextCycleAt,
  START,
} from "../../src/domain/reconciliation.ts";

const item = (number: number, updatedAt: string, fingerprint = `f${number}`) => ({
  number,
  updatedAt,
  fingerprint,
});

describe("changesSince", () => {
  it("takes everything on the first listing and starts the next at the latest change", () => {
    const { changed, next } = changesSince(START, [
      item(1, "2026-01-01T00:00:01Z"),
      item(2, "2026-01-01T00:00:03Z"),
    ]);
    expect(changed).toEqual([1, 2]);
    expect(next).toEqual({ since: "2026-01-01T00:00:03Z", seen: { 2: "f2" } });
  });

  it("skips the boundary's items listed again unchanged, and keeps the cursor", () => {
    const cursor: Cursor = { since: "2026-01-01T00:00:03Z", seen: { 2: "f2" } };
    expect(changesSince(cursor, [item(2, "2026-01-01T00:00:03Z")])).toEqual({ changed: [], next: cursor });
    expect(changesSince(cursor, [])).toEqual({ changed: [], next: cursor });
  });

  it("sees an item changed again within the boundary's second by its fingerprint", () => {
    const cursor: Cursor = { since: "2026-01-01T00:00:03Z", seen: { 2: "f2" } };
    const listed = [item(2, "2026-01-01T00:00:03Z", "other"), item(3, "2026-01-01T00:00:03Z")];
    expect(changesSince(cursor, listed)).toEqual({
      changed: [2, 3],
      next: { since: "2026-01-01T00:00:03Z", seen: { 2: "other", 3: "f3" } },
    });
  });

  it("moves on past the boundary when newer changes come", () => {
    const cursor: Cursor = { since: "2026-01-01T00:00:03Z", seen: { 2: "f2" } };
    const listed = [item(2, "2026-01-01T00:00:03Z"), item(4, "2026-01-01T00:01:00Z")];
    expect(changesSince(cursor, listed)).toEqual({
      changed: [4],
      next: { since: "2026-01-01T00:01:00Z", seen: { 4: "f4" } },
    });
  });
});

describe("changesSince with the forge's clock", () => {
  const at = (iso: string) => Date.parse(iso);
  const cursor: Cursor = { since: "2026-01-01T00:00:03Z", seen: { 2: "f2", 5: "f5" } };

  it("starts after the boundary's second once the forge's clock has settled past it", () => {
    const listed = [item(2, "2026-01-01T00:00:03Z"), item(5, "2026-01-01T00:00:03Z")];
    const settled = at("2026-01-01T00:00:04Z") + BOUNDARY_SETTLE_MS;
    expect(changesSince(cursor, listed, settled)).toEqual({
      changed: [],
      next: { since: "2026-01-01T00:00:04Z", seen: {} },
    });
  });

  it("keeps the boundary while the forge's clock is within the settling time or unknown", () => {
    const listed = [item(2, "2026-01-01T00:00:03Z"), item(5, "2026-01-01T00:00:03Z")];
    const early = at("2026-01-01T00:00:04Z") + BOUNDARY_SETTLE_MS - 1;
    expect(changesSince(cursor, listed, early)).toEqual({ changed: [], next: cursor });
    expect(changesSince(cursor, listed, null)).toEqual({ changed: [], next: cursor });
  });

  it("reports a change at the boundary and still closes the second", () => {
    const listed = [item(2, "2026-01-01T00:00:03Z", "other"), item(7, "2026-01-01T00:00:03Z")];
    expect(changesSince(cursor, listed, at("2026-01-01T00:01:00Z"))).toEqual({
      changed: [2, 7],
      next: { since: "2026-01-01T00:00:04Z", seen: {} },
    });
  });

  it("closes the latest change's second, not the old boundary's", () => {
    const listed = [item(2, "2026-01-01T00:00:03Z"), item(4, "2026-01-01T00:00:09Z")];
    expect(changesSince(cursor, listed, at("2026-01-01T00:00:12Z"))).toEqual({
      changed: [4],
      next: { since: "2026-01-01T00:00:10Z", seen: {} },
    });
    expect(changesSince(cursor, listed, at("2026-01-01T00:00:11Z"))).toEqual({
      changed: [4],
      next: { since: "2026-01-01T00:00:09Z", seen: { 4: "f4" } },
    });
  });

  it("a cursor that starts after a closed second stays there while nothing is listed", () => {
    const closed: Cursor = { since: "2026-01-01T00:00:04Z", seen: {} };
    expect(changesSince(closed, [], at("2026-01-01T01:00:00Z"))).toEqual({ changed: [], next: closed });
  });

  it("closes a first listing's latest second too", () => {
    expect(changesSince(START, [item(1, "2026-01-01T00:00:01Z")], at("2026-01-01T00:05:00Z"))).toEqual({
      changed: [1],
      next: { since: "2026-01-01T00:00:02Z", seen: {} },
    });
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

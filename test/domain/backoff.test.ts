import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../src/domain/backoff.ts";

describe("backoffDelay", () => {
  const policy = { baseMs: 100, maxMs: 1_000, jitter: 0 };

  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [4, 800],
    [5, 1_000],
    [60, 1_000],
    [10_000, 1_000],
  ])("attempt %i waits %i ms", (attempt, expected) => {
    expect(backoffDelay(attempt, policy)).toBe(expected);
  });

  it("full jitter stays within [0, delay]", () => {
    const jittered = { ...policy, jitter: 1 };
    expect(backoffDelay(3, jittered, () => 0)).toBe(400);
    expect(backoffDelay(3, jittered, () => 0.999999)).toBe(0);
    expect(backoffDelay(3, jittered, () => 0.5)).toBe(200);
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects attempt %s", (attempt) => {
    expect(() => backoffDelay(attempt, policy)).toThrow(RangeError);
  });
});

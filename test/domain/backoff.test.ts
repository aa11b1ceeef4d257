import { describe, expect, it } from "vitest";
import { backoffDelay, DEFAULT_POLL_MAX_MS, retryPolicy } from "../../src/domain/backoff.ts";

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

describe("retryPolicy", () => {
  const failure = { baseMs: 500, maxMs: 5 * 60_000, jitter: 0.5 };
  const longest = (policy: ReturnType<typeof retryPolicy>, attempt: number) =>
    backoffDelay(attempt, policy, () => 0);

  it("a failure keeps the failure backoff", () => {
    expect(retryPolicy(false, failure, 15_000)).toBe(failure);
  });

  it("a poll starts at the failure backoff's second step and never waits longer than its cap", () => {
    const poll = retryPolicy(true, failure, 15_000);
    expect([1, 2, 3, 4, 5, 6, 60].map((a) => longest(poll, a))).toEqual([
      1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000,
    ]);
    // Jitter only ever shortens a wait, by a fifth at most.
    expect(backoffDelay(60, poll, () => 0.999999)).toBeGreaterThanOrEqual(12_000);
  });

  it("a poll's cap defaults to 20 s and never exceeds the failure backoff's", () => {
    expect(longest(retryPolicy(true, failure), 60)).toBe(DEFAULT_POLL_MAX_MS);
    expect(retryPolicy(true, { ...failure, maxMs: 10_000 }, 60_000).maxMs).toBe(10_000);
    expect(retryPolicy(true, failure, 500)).toMatchObject({ baseMs: 500, maxMs: 500 });
    // A project whose effects retry from 50 ms (a forge on the same host) polls from 100 ms.
    expect(retryPolicy(true, { ...failure, baseMs: 50 }).baseMs).toBe(100);
  });
});

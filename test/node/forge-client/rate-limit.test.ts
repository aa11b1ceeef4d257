import { describe, expect, it } from "vitest";
import {
  isRateLimited,
  rateLimitResetMs,
  requestedWaitMs,
  retryAfterMs,
} from "../../../src/forge/client/rate-limit.ts";

const NOW = Date.parse("2026-11-20T10:00:00Z");

describe("retryAfterMs", () => {
  it.each([
    ["120", 120_000],
    ["0", 0],
    [" 5 ", 5_000],
    ["Fri, 20 Nov 2026 10:00:30 GMT", 30_000],
    ["Fri, 20 Nov 2026 09:00:00 GMT", 0],
  ])("%j → %i ms", (value, expected) => {
    expect(retryAfterMs(new Headers({ "retry-after": value }), NOW)).toBe(expected);
  });

  it.each(["", "soon", "-5"])("ignores %j", (value) => {
    expect(retryAfterMs(new Headers({ "retry-after": value }), NOW)).toBeUndefined();
  });
});

describe("rateLimitResetMs", () => {
  it("reads an epoch reset once the quota is spent", () => {
    const headers = new Headers({
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(NOW / 1000 + 42),
    });
    expect(rateLimitResetMs(headers, NOW)).toBe(42_000);
  });

  it("reads a small reset as seconds from now", () => {
    expect(
      rateLimitResetMs(new Headers({ "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "15" }), NOW),
    ).toBe(15_000);
  });

  it("is zero for a reset in the past", () => {
    const headers = new Headers({
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(NOW / 1000 - 5),
    });
    expect(rateLimitResetMs(headers, NOW)).toBe(0);
  });

  it("ignores the reset while quota remains", () => {
    const headers = new Headers({
      "x-ratelimit-remaining": "12",
      "x-ratelimit-reset": String(NOW / 1000 + 42),
    });
    expect(rateLimitResetMs(headers, NOW)).toBeUndefined();
  });
});

describe("isRateLimited", () => {
  it.each([
    [429, {}, true],
    [403, { "x-ratelimit-remaining": "0" }, true],
    [403, { "retry-after": "60" }, true],
    [403, { "x-ratelimit-remaining": "4999" }, false],
    [403, {}, false],
    [503, { "retry-after": "60" }, false],
    [404, { "x-ratelimit-remaining": "0" }, false],
  ])("%i %j → %s", (status, headers, expected) => {
    expect(isRateLimited(status, new Headers(headers))).toBe(expected);
  });
});

describe("requestedWaitMs", () => {
  it("prefers Retry-After over the quota reset", () => {
    const headers = new Headers({
      "retry-after": "3",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(NOW / 1000 + 600),
    });
    expect(requestedWaitMs(headers, NOW)).toBe(3_000);
  });

  it("is undefined without hints", () => {
    expect(requestedWaitMs(new Headers(), NOW)).toBeUndefined();
  });
});

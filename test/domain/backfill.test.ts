import { describe, expect, it } from "vitest";
import {
  afterCheck,
  afterPage,
  BACKFILL_FLOOR,
  closedUnder,
  credentialsChanged,
  FIRST_PASS,
  MAX_PASSES,
  pageAllowance,
  refusedForGood,
  retryAt,
} from "../../src/domain/backfill.ts";
import { failureOf } from "../../src/domain/failure.ts";
import { ForgeHttpError, ForgeNetworkError, ForgeRateLimitError } from "../../src/forge/client/errors.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");

describe("the backfill's allowance", () => {
  it("reads while more than its floor of the window is left, and names the reset otherwise", () => {
    const resetAt = NOW + 600_000;
    expect(pageAllowance(null, NOW)).toEqual({ ok: true });
    expect(pageAllowance({ limit: 5000, remaining: 2600, resetAt }, NOW)).toEqual({ ok: true });
    const low = pageAllowance({ limit: 5000, remaining: 5000 * BACKFILL_FLOOR, resetAt }, NOW);
    expect(low).toMatchObject({ ok: false, until: resetAt });
    expect(low.ok ? "" : low.reason).toContain("2500 of 5000 requests left");
  });

  it("reads again once the window it knew has reset", () => {
    expect(pageAllowance({ limit: 5000, remaining: 10, resetAt: NOW - 1 }, NOW)).toEqual({ ok: true });
  });
});

describe("a pass over the open listing", () => {
  it("dates its check from the forge's clock at its first page, a settle before, to the second", () => {
    const forgeTime = Date.parse("2026-11-27T11:59:30Z");
    const first = afterPage(FIRST_PASS, { count: 50, more: true, forgeTime }, NOW);
    expect(first).toEqual({ pass: 1, page: 2, listed: 50, from: "2026-11-27T11:59:28Z", end: forgeTime });
    const last = afterPage(first, { count: 7, more: false, forgeTime: forgeTime + 5_000 }, NOW);
    expect(last).toMatchObject({ page: 0, listed: 57, from: first.from, end: forgeTime + 5_000 });
  });

  it("runs again when an item it listed closed before its last page was read", () => {
    const pass = { ...FIRST_PASS, page: 0, listed: 3, from: "2026-11-27T11:00:00Z", end: NOW };
    const changed = [
      {
        number: 1,
        state: "closed" as const,
        updatedAt: "2026-11-27T11:30:00Z",
        closedAt: "2026-11-27T11:30:00Z",
      },
      // Closed after the pass ended: it stepped over nothing.
      {
        number: 2,
        state: "closed" as const,
        updatedAt: "2026-11-27T12:10:00Z",
        closedAt: "2026-11-27T12:10:00Z",
      },
      // Never listed by the pass.
      {
        number: 9,
        state: "closed" as const,
        updatedAt: "2026-11-27T11:30:00Z",
        closedAt: "2026-11-27T11:30:00Z",
      },
      { number: 3, state: "open" as const, updatedAt: "2026-11-27T11:30:00Z", closedAt: null },
    ];
    const closed = closedUnder(pass, new Set([1, 2, 3]), changed);
    expect(closed).toEqual([1]);
    const next = afterCheck(pass, closed);
    expect(next).toEqual({ next: { ...FIRST_PASS, pass: 2 }, reason: expect.stringContaining("#1 closed") });
    expect(afterCheck(pass, [])).toEqual({ done: true, reason: null });
  });

  it("stops after its last pass, saying what it may have missed", () => {
    const result = afterCheck({ ...FIRST_PASS, pass: MAX_PASSES, page: 0 }, [4]);
    expect(result).toEqual({ done: true, reason: expect.stringContaining("may be missed") });
  });
});

describe("a failed step", () => {
  it("backs off, and waits as long as the forge asked when it asked longer", () => {
    expect(retryAt(NOW, 1, null)).toBe(NOW + 30_000);
    expect(retryAt(NOW, 2, null)).toBe(NOW + 60_000);
    expect(retryAt(NOW, 20, null)).toBe(NOW + 15 * 60_000);
    expect(retryAt(NOW, 1, NOW + 3_600_000)).toBe(NOW + 3_600_000);
  });
});

describe("a refusal for good", () => {
  const info = { forge: "github", method: "GET", path: "/repos/o/r/issues" };
  const http = (status: number) => failureOf(new ForgeHttpError(info, status, "refused"));

  it("is a wrong token, lost rights or a repository gone: 401, 403, 404, 410", () => {
    expect([401, 403, 404, 410].map((status) => refusedForGood(http(status)))).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it("is not a rate limit, an answer that may pass, or no answer at all", () => {
    expect([429, 422, 500, 502, 503].map((status) => refusedForGood(http(status)))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    const limited = new ForgeRateLimitError(info, 403, "rate limited", NOW + 60_000, 60_000);
    expect(refusedForGood(failureOf(limited))).toBe(false);
    expect(refusedForGood(failureOf(new ForgeNetworkError(info, "reset")))).toBe(false);
  });
});

describe("the credentials a refused backfill waits to change", () => {
  const was = { forge: "forgejo", apiUrl: "https://forge.test/api/v1", repo: "acme/app", token: "t1" };

  it("change with the token, the forge's address, the repository or the kind of forge", () => {
    expect(credentialsChanged(was, { ...was, token: "t2" })).toBe(true);
    expect(credentialsChanged(was, { ...was, apiUrl: "https://other.test/api/v1" })).toBe(true);
    expect(credentialsChanged(was, { ...was, repo: "acme/moved" })).toBe(true);
    expect(credentialsChanged(was, { ...was, forge: "gitea" })).toBe(true);
  });

  it("do not with a trailing slash or the repository's case", () => {
    expect(credentialsChanged(was, { ...was, apiUrl: `${was.apiUrl}/`, repo: "ACME/App" })).toBe(false);
  });
});

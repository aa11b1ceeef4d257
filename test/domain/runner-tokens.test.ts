import { describe, expect, it } from "vitest";
import { afterLostLease } from "../../src/domain/job-queue.ts";
import { checkToken, claimScope, type TokenRow } from "../../src/domain/runner-tokens.ts";

const NOW = 1_000_000;
const TTL = 100_000;
const row = (patch: Partial<TokenRow> = {}): TokenRow => ({
  tokenHash: "old",
  tokenExpiresAt: NOW + TTL,
  nextTokenHash: null,
  nextTokenExpiresAt: null,
  ...patch,
});

describe("checkToken", () => {
  it("a fresh token is good and not due", () => {
    expect(checkToken(row(), "old", NOW, TTL)).toEqual({
      ok: true,
      promote: false,
      expiresAt: NOW + TTL,
      rotate: false,
    });
  });

  it("past half its lifetime it is due; at its expiry it is refused", () => {
    expect(checkToken(row({ tokenExpiresAt: NOW + TTL / 2 - 1 }), "old", NOW, TTL)).toMatchObject({
      ok: true,
      rotate: true,
    });
    expect(checkToken(row({ tokenExpiresAt: NOW }), "old", NOW, TTL)).toMatchObject({ ok: false });
  });

  it("the rotated token's first use promotes it, with its own expiry", () => {
    const rotated = row({ tokenExpiresAt: NOW + 10, nextTokenHash: "new", nextTokenExpiresAt: NOW + TTL });
    expect(checkToken(rotated, "new", NOW, TTL)).toEqual({
      ok: true,
      promote: true,
      expiresAt: NOW + TTL,
      rotate: false,
    });
    // The old one still works meanwhile, and is still due.
    expect(checkToken(rotated, "old", NOW, TTL)).toMatchObject({ ok: true, promote: false, rotate: true });
  });
});

describe("claimScope", () => {
  it("an unbound runner claims what it asks for", () => {
    expect(claimScope(null, undefined)).toBeUndefined();
    expect(claimScope(null, ["a"])).toEqual(["a"]);
  });

  it("a bound runner claims within its projects only", () => {
    expect(claimScope(["a", "b"], undefined)).toEqual(["a", "b"]);
    expect(claimScope(["a", "b"], ["b", "c"])).toEqual(["b"]);
    expect(claimScope(["a"], ["c"])).toEqual([]);
  });
});

describe("afterLostLease for a revoked runner", () => {
  const policy = {
    parallel: 1,
    leaseMs: 60_000,
    confirmMs: 15_000,
    affinityGraceMs: 60_000,
    maxAttempts: 5,
    maxUnconfirmed: 10,
  };
  it("requeues without waiting for the runner that will not come back", () => {
    const job = {
      attempt: 1,
      runnerId: "gone",
      cancelled: false,
      confirmed: true,
      affinity: null,
      affinityUntil: 0,
      unconfirmed: 0,
    };
    expect(afterLostLease(job, "runner revoked", NOW, policy, true)).toEqual({
      action: "requeue",
      attempt: 2,
      affinity: null,
      affinityUntil: 0,
      unconfirmed: 0,
      notBefore: 0,
    });
    expect(afterLostLease(job, "lease expired", NOW, policy)).toMatchObject({ affinity: "gone" });
  });
});

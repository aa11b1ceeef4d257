import { describe, expect, it } from "vitest";
import { afterLostLease } from "../../src/domain/job-queue.ts";
import {
  checkToken,
  claimScope,
  supersededTokenError,
  suspectRotation,
  type TokenRow,
} from "../../src/domain/runner-tokens.ts";

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

describe("suspectRotation", () => {
  it("is a rotation from another address than the runner was seen at; unknown addresses say nothing", () => {
    expect(suspectRotation("198.51.100.7", "203.0.113.9", NOW)).toEqual({
      at: NOW,
      from: "203.0.113.9",
      before: "198.51.100.7",
    });
    expect(suspectRotation("198.51.100.7", "198.51.100.7", NOW)).toBeNull();
    expect(suspectRotation(null, "203.0.113.9", NOW)).toBeNull();
    expect(suspectRotation("198.51.100.7", null, NOW)).toBeNull();
  });

  it("the superseded token's holder is told what happened and what to do", () => {
    expect(supersededTokenError("runner-0123456789abcdef", Date.UTC(2026, 0, 2))).toBe(
      "runner token superseded: runner runner-0123456789abcdef rotated its token at 2026-01-02T00:00:00.000Z and uses the new one; if this runner did not rotate it, its token was stolen: have the operator revoke runner-0123456789abcdef (conveyor runner revoke runner-0123456789abcdef) and register this runner again",
    );
  });
});

import { describe, expect, it } from "vitest";
import {
  type ClassifierVerdict,
  DEFAULT_VAULT_POLICY,
  decide,
  decisionOf,
  newItem,
  parseVaultId,
  route,
  VAULT_KINDS,
  VAULT_STATES,
  type VaultEvent,
  type VaultItem,
  type VaultState,
} from "../../src/domain/vault.ts";

const T0 = 1_000_000;
const EXPIRY = 60_000;
const fresh = (): VaultItem =>
  newItem(
    {
      id: "v1",
      kind: "action_step",
      requester: { type: "issue", issue: 7, step: "rotate" },
      title: "Rotate",
      payload: {},
    },
    T0,
    EXPIRY,
  );

/** An item brought to `state` through the table itself. */
function inState(state: VaultState): VaultItem {
  const item = fresh();
  const steps: Record<VaultState, VaultEvent[]> = {
    pending: [],
    approved: [{ type: "approve", by: "alice", at: T0 + 1 }],
    fired: [
      { type: "approve", by: "alice", at: T0 + 1 },
      { type: "fired", at: T0 + 2 },
    ],
    rejected: [{ type: "reject", by: "bob", reason: "not today", at: T0 + 1 }],
    expired: [{ type: "expire", at: T0 + EXPIRY }],
    withdrawn: [{ type: "withdraw", reason: "the issue is abandoned", at: T0 + 1 }],
  };
  return steps[state].reduce((it, event) => {
    const outcome = decide(it, event);
    if (!outcome.ok) throw new Error(outcome.reason);
    return outcome.item;
  }, item);
}

const EVENTS: Record<VaultEvent["type"], VaultEvent> = {
  classified: { type: "classified", verdict: { verdict: "ask", reason: "unsure" }, at: T0 + 5 },
  approve: { type: "approve", by: "carol", at: T0 + 5 },
  reject: { type: "reject", by: "carol", at: T0 + 5 },
  expire: { type: "expire", at: T0 + EXPIRY + 5 },
  fired: { type: "fired", at: T0 + 5 },
  withdraw: { type: "withdraw", reason: "the issue left", at: T0 + 5 },
};

/** What every (state, event) pair does: the state it leads to, or a refusal matching the pattern. */
const TABLE: Record<VaultState, Record<VaultEvent["type"], VaultState | RegExp>> = {
  pending: {
    classified: "pending",
    approve: "approved",
    reject: "rejected",
    expire: "expired",
    fired: /v1 is pending: only an approved item fires/,
    withdraw: "withdrawn",
  },
  approved: {
    classified: /already approved by alice/,
    approve: /already approved by alice/,
    reject: /already approved by alice/,
    expire: /already approved by alice/,
    fired: "fired",
    // An approval nothing acted on never fired.
    withdraw: "withdrawn",
  },
  fired: {
    classified: /approved by alice and has fired/,
    approve: /approved by alice and has fired/,
    reject: /approved by alice and has fired/,
    expire: /approved by alice and has fired/,
    fired: /approved by alice and has fired/,
    withdraw: /approved by alice and has fired/,
  },
  rejected: {
    classified: /rejected by bob/,
    approve: /rejected by bob/,
    reject: /rejected by bob/,
    expire: /rejected by bob/,
    fired: /rejected by bob/,
    withdraw: /rejected by bob/,
  },
  expired: {
    classified: /expired at .* with nobody deciding/,
    approve: /expired at .* with nobody deciding/,
    reject: /expired at .* with nobody deciding/,
    expire: /expired at .* with nobody deciding/,
    fired: /expired at .* with nobody deciding/,
    withdraw: /expired at .* with nobody deciding/,
  },
  withdrawn: {
    classified: /v1 was withdrawn: the issue is abandoned/,
    approve: /v1 was withdrawn: the issue is abandoned/,
    reject: /v1 was withdrawn: the issue is abandoned/,
    expire: /v1 was withdrawn: the issue is abandoned/,
    fired: /v1 was withdrawn: the issue is abandoned/,
    withdraw: /v1 was withdrawn: the issue is abandoned/,
  },
};

describe("decide: every state × every event", () => {
  const cases = VAULT_STATES.flatMap((state) =>
    (Object.keys(EVENTS) as VaultEvent["type"][]).map((type) => [state, type, TABLE[state][type]] as const),
  );
  it.each(cases)("%s + %s → %s", (state, type, expected) => {
    const outcome = decide(inState(state), EVENTS[type]);
    if (expected instanceof RegExp) {
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.reason).toMatch(expected);
    } else {
      expect(outcome.ok && outcome.item.state).toBe(expected);
    }
  });
});

describe("decide: the rules inside a state", () => {
  it("an approval at or after the deadline is refused even before the alarm expired the item", () => {
    const late = decide(fresh(), { type: "approve", by: "alice", at: T0 + EXPIRY });
    expect(late).toEqual({ ok: false, reason: expect.stringMatching(/^v1 expired at /) });
    const lateReject = decide(fresh(), { type: "reject", by: "alice", at: T0 + EXPIRY + 1 });
    expect(lateReject.ok).toBe(false);
  });

  it("a withdrawal audits the requester and why; an approval nothing acted on is withdrawn, never fired", () => {
    const withdrawn = decide(inState("approved"), { type: "withdraw", reason: "the issue left", at: T0 + 9 });
    if (!withdrawn.ok) throw new Error(withdrawn.reason);
    expect(withdrawn.item.audit.at(-1)).toEqual({
      action: "withdrawn",
      by: "issue #7 (rotate)",
      at: T0 + 9,
      reason: "the issue left",
    });
    expect(withdrawn.item.audit.some((e) => e.action === "fired")).toBe(false);
  });

  it("a firing audits the approver, and what fired it when it says", () => {
    const approved = inState("approved");
    const fired = decide(approved, { type: "fired", at: T0 + 9, reason: "run by job p.7.abc" });
    if (!fired.ok) throw new Error(fired.reason);
    expect(fired.item.audit.at(-1)).toEqual({
      action: "fired",
      by: "alice",
      at: T0 + 9,
      reason: "run by job p.7.abc",
    });
    expect(decide(fired.item, { type: "fired", at: T0 + 10 })).toEqual({
      ok: false,
      reason: "v1 was approved by alice and has fired",
    });
  });

  it("an expiry before the deadline is refused", () => {
    expect(decide(fresh(), { type: "expire", at: T0 + EXPIRY - 1 })).toEqual({
      ok: false,
      reason: expect.stringMatching(/does not expire before/),
    });
  });

  it("a second classification is refused; the first is kept and audited", () => {
    const once = decide(fresh(), EVENTS.classified);
    if (!once.ok) throw new Error(once.reason);
    expect(once.item.verdict).toEqual({ verdict: "ask", reason: "unsure" });
    expect(once.item.audit.at(-1)).toEqual({
      action: "classified",
      by: "policy",
      at: T0 + 5,
      reason: "ask: unsure",
    });
    expect(decide(once.item, EVENTS.classified)).toMatchObject({ ok: false });
  });

  it("keeps one audit entry per decision: requested, approved by whom, fired", () => {
    expect(inState("fired").audit).toEqual([
      { action: "requested", by: "issue #7 (rotate)", at: T0 },
      { action: "approved", by: "alice", at: T0 + 1 },
      { action: "fired", by: "alice", at: T0 + 2 },
    ]);
    expect(inState("rejected").audit.at(-1)).toEqual({
      action: "rejected",
      by: "bob",
      at: T0 + 1,
      reason: "not today",
    });
    expect(inState("expired").audit.at(-1)).toEqual({ action: "expired", by: "timeout", at: T0 + EXPIRY });
  });
});

describe("decisionOf: what the requester hears", () => {
  it.each<[VaultState, ReturnType<typeof decisionOf>]>([
    ["pending", null],
    ["approved", { decision: "approved", by: "alice" }],
    ["fired", { decision: "approved", by: "alice" }],
    ["rejected", { decision: "rejected", by: "bob", reason: "not today" }],
    ["expired", { decision: "expired", by: "timeout" }],
    // Its requester asked for the withdrawal: it is told nothing.
    ["withdrawn", null],
  ])("%s → %j", (state, expected) => {
    expect(decisionOf(inState(state))).toEqual(expected);
  });
});

describe("route: the classifier's verdict under the project's policy", () => {
  const verdict = (v: ClassifierVerdict["verdict"]): ClassifierVerdict => ({ verdict: v, reason: "because" });

  it.each(VAULT_KINDS)("by default no %s is approved without a human; rejection and asking pass", (kind) => {
    expect(route(kind, verdict("approve"), DEFAULT_VAULT_POLICY).action).toBe("ask");
    expect(route(kind, verdict("reject"), DEFAULT_VAULT_POLICY)).toEqual({
      action: "reject",
      reason: "because",
    });
    expect(route(kind, verdict("ask"), DEFAULT_VAULT_POLICY)).toEqual({ action: "ask", reason: "because" });
  });

  it("a kind the policy lists is approved by the classifier", () => {
    const policy = { autoApprove: ["agent_output", "action_step"] as const };
    expect(route("agent_output", verdict("approve"), policy)).toEqual({
      action: "approve",
      reason: "because",
    });
    expect(route("action_step", verdict("approve"), policy).action).toBe("approve");
  });

  it("a protected merge is never approved by the classifier, whatever the policy says", () => {
    const policy = { autoApprove: [...VAULT_KINDS] };
    const routed = route("protected_merge", verdict("approve"), policy);
    expect(routed.action).toBe("ask");
    expect(routed.reason).toMatch(/always needs a human/);
  });
});

describe("parseVaultId", () => {
  it.each([
    ["v7", "v7"],
    ["V12", "v12"],
    ["7", "v7"],
    ["v0", null],
    ["v", null],
    ["x7", null],
    ["v7;rm", null],
    ["v1234567890", null],
  ])("%j → %j", (text, expected) => {
    expect(parseVaultId(text)).toBe(expected);
  });
});

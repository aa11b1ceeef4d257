/**
 * Events that arrive before the state that accepts them are parked on the issue, applied once it comes, and
 * rejected (their id spent) only when no later state can take them or they waited too long
 * (src/domain/early-events.ts). Against the IssueDO's own storage; the project is not registered, so its
 * effects wait in the outbox.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PARKING } from "../../src/domain/early-events.ts";
import type { LifecycleEvent } from "../../src/domain/lifecycle.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { PATHS } from "../support/lifecycle-samples.ts";
import { freshProject } from "./support/webhooks.ts";

async function driven(name: string, events: LifecycleEvent[]) {
  const project = freshProject(name);
  const stub = issueStub(env, project, 1);
  const send = (event: LifecycleEvent, id: string) =>
    stub.apply({ id, project, number: 1, cause: { kind: "system", id: "test" }, event });
  for (const [i, event] of events.entries()) {
    expect((await send(event, `path-${i}`)).outcome).toBe("applied");
  }
  return { stub, send };
}

const approved = { type: "vault_decision", itemId: "v1", decision: "approved", by: "alice" } as const;

describe("an event that came early", () => {
  it("a held merge's vault decision before its vault_requested waits, and merges once the id is recorded", async () => {
    const { stub, send } = await driven("early-vault", PATHS.awaiting_approval);
    const parked = await send(approved, "vault:v1:decision");
    expect(parked).toMatchObject({
      outcome: "parked",
      state: "awaiting_approval",
      reason: expect.stringMatching(
        /none yet\); parked until vault item v1 to be recorded \(vault_requested\)$/,
      ),
    });
    // Sent again meanwhile: the same event, still waiting.
    expect(await send(approved, "vault:v1:decision")).toMatchObject({ duplicate: true, outcome: "parked" });

    await send({ type: "vault_requested", itemId: "v1" }, "vault-requested");
    const view = await stub.view();
    expect(view?.state).toBe("merging");
    expect(view?.history.slice(-3).map((h) => [h.eventId, h.event, h.outcome, h.to])).toEqual([
      ["vault:v1:decision:parked", "vault_decision", "parked", "awaiting_approval"],
      ["vault-requested", "vault_requested", "applied", "awaiting_approval"],
      ["vault:v1:decision", "vault_decision", "applied", "merging"],
    ]);
    // Applied under its own id: sent once more, it is a duplicate of that.
    expect(await send(approved, "vault:v1:decision")).toMatchObject({ duplicate: true, outcome: "applied" });
  });

  it("CI on a head the session has not reported yet applies once it does", async () => {
    const { stub, send } = await driven("early-ci", PATHS.running);
    const ci = { type: "ci", result: "green", headSha: "cafe123" } as const;
    expect((await send(ci, "ci-1")).outcome).toBe("parked");
    const phase = { type: "phase", phase: "awaiting_ci", headSha: "cafe123", sessionId: "s" } as const;
    await send(phase, "phase-1");
    expect((await stub.view())?.state).toBe("awaiting_review");
  });

  it("is rejected, its id spent, once no later state can take it", async () => {
    const { stub, send } = await driven("early-ci-stale", PATHS.running);
    await send({ type: "ci", result: "green", headSha: "cafe123" }, "ci-1");
    // The session escalates instead: no state after that waits for this CI result.
    await send({ type: "phase", phase: "escalate", reason: "stuck" }, "phase-1");
    const view = await stub.view();
    expect(view?.state).toBe("escalated");
    expect(view?.history.at(-1)).toMatchObject({
      eventId: "ci-1",
      outcome: "rejected",
      reason: "ci does not apply: the issue is waiting for a human",
    });
  });

  it("waits at most a day: the alarm rejects it then, saying so", async () => {
    const { stub, send } = await driven("early-expiry", PATHS.awaiting_approval);
    await send(approved, "vault:v1:decision");
    const { expiry } = await runInDurableObject(stub, async (_instance, state) => ({
      expiry: state.storage.sql.exec<{ at: number }>("SELECT expires_at AS at FROM parked").one().at,
    }));
    expect(expiry - Date.now()).toBeGreaterThan(PARKING.ttlMs - 60_000);
    // The alarm is armed for it; the clock passes it.
    await runInDurableObject(stub, async (_instance, state) => {
      expect(await state.storage.getAlarm()).toBeLessThanOrEqual(expiry);
      state.storage.sql.exec("UPDATE parked SET expires_at = ?", Date.now() - 1);
      await state.storage.setAlarm(Date.now());
    });
    await runDurableObjectAlarm(stub);
    expect((await stub.view())?.history.at(-1)).toMatchObject({
      eventId: "vault:v1:decision",
      outcome: "rejected",
      reason: expect.stringMatching(/none yet\); no state took it in \d+ min parked$/),
    });
    // Now spent: the vault's id arriving late moves nothing.
    await send({ type: "vault_requested", itemId: "v1" }, "vault-requested");
    expect((await stub.view())?.state).toBe("awaiting_approval");
  });

  it(`holds at most ${PARKING.max}: the one that waited longest gives way`, async () => {
    const { stub, send } = await driven("early-bound", PATHS.running);
    for (let i = 0; i <= PARKING.max; i++) {
      const headSha = `${i.toString(16).padStart(7, "0")}`;
      expect((await send({ type: "ci", result: "green", headSha }, `ci-${i}`)).outcome).toBe("parked");
    }
    const history = (await stub.view())?.history ?? [];
    expect(history.filter((h) => h.outcome === "rejected").map((h) => [h.eventId, h.reason])).toEqual([
      ["ci-0", `more than ${PARKING.max} events waited for a later state; this one longest`],
    ]);
  });
});

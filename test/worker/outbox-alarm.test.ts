/**
 * An outbox delivered strictly in order waits for its head: rows behind a head put off by a retry's backoff are
 * due on paper, and an alarm armed for them would find nothing to send, re-arm for the same past moment and
 * fire again until the head comes due (a billed invocation each time). Against real Durable Object storage.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Outbox } from "../../durable-objects/shared/outbox.ts";

const BACKOFF_MS = 60_000;

/** A head tried once and put off for a minute, and a row queued behind it, due now, in `channel`. */
function retriedHead(sql: SqlStorage, channel: string, now: number): void {
  const outbox = new Outbox(sql);
  outbox.enqueue(channel, { n: 1 }, now);
  outbox.enqueue(channel, { n: 2 }, now);
  const [head] = outbox.due([channel], now, 1);
  if (!head) throw new Error("no head");
  outbox.postpone([head.id], now, "refused");
  sql.exec("UPDATE outbox SET next_at = ? WHERE id = ?", now + BACKOFF_MS, head.id);
}

describe("Outbox.nextOfEach", () => {
  it("is the earliest head of the channels, each in order on its own, not the earliest row", async () => {
    const stub = env.PROJECTS.get(env.PROJECTS.idFromName(`outbox-${crypto.randomUUID()}`));
    await runInDurableObject(stub, (_instance, state) => {
      const { sql } = state.storage;
      const outbox = new Outbox(sql);
      const now = Date.now();
      retriedHead(sql, "a", now);
      expect(outbox.nextAt(["a"])).toBe(now);
      expect(outbox.nextOfEach(["a", "b"])).toBe(now + BACKOFF_MS);
      outbox.enqueue("b", { n: 3 }, now + 5_000);
      expect(outbox.nextOfEach(["a", "b"])).toBe(now + 5_000);
      expect(outbox.nextOfEach([])).toBeNull();
    });
  });
});

describe("the ProjectDO's alarm", () => {
  it("waits for its issue channel's retried head, not for the events queued behind it", async () => {
    const stub = env.PROJECTS.get(env.PROJECTS.idFromName(`outbox-alarm-${crypto.randomUUID().slice(0, 8)}`));
    const now = await runInDurableObject(stub, async (_instance, state) => {
      const now = Date.now();
      retriedHead(state.storage.sql, "issue", now);
      await state.storage.setAlarm(now);
      return now;
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(now + BACKOFF_MS);
  });
});

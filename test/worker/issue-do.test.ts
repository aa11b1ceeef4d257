import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { laneChannels } from "../../durable-objects/issue/effects/deliverers.ts";
import { OUTBOX_BACKOFF } from "../../durable-objects/shared/outbox.ts";
import { backoffDelay } from "../../src/domain/backoff.ts";
import { awaitsLaterState } from "../../src/domain/early-events.ts";
import {
  DEFAULT_TIMEOUTS_MS,
  EVENT_TYPES,
  type EventType,
  INITIAL_CONTEXT,
  type LifecycleEvent,
  STATES,
  type State,
  type TimerKind,
  transition,
} from "../../src/domain/lifecycle.ts";
import type { EventEnvelope } from "../../src/issue-events.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { PATHS, sample } from "../support/lifecycle-samples.ts";

let counter = 0;
/** Each test gets its own project: D1 and Durable Object storage are shared across tests in this plugin. */
const freshProject = (name: string) => `${name}-${Date.now().toString(36)}-${counter++}`;

function envelope(project: string, number: number, event: LifecycleEvent, id: string): EventEnvelope {
  return { id, project, number, cause: { kind: "system", id: "test" }, event };
}

async function drive(
  project: string,
  number: number,
  events: LifecycleEvent[],
  extra: Partial<EventEnvelope> = {},
) {
  const stub = issueStub(env, project, number);
  for (const [i, event] of events.entries()) {
    const result = await stub.apply({ ...envelope(project, number, event, `path-${i}`), ...extra });
    expect(result.outcome, `${event.type}: ${result.reason}`).toBe("applied");
  }
  return stub;
}

async function d1Transitions(project: string, number: number) {
  const { results } = await env.DB.prepare(
    "SELECT seq, from_state, to_state, event, outcome, reason FROM transitions WHERE project_id = ? AND number = ? ORDER BY seq",
  )
    .bind(project, number)
    .all<{
      seq: number;
      from_state: string;
      to_state: string;
      event: string;
      outcome: string;
      reason: string | null;
    }>();
  return results;
}

async function d1Issue(project: string, number: number) {
  return env.DB.prepare("SELECT state, iteration, seq FROM issues WHERE project_id = ? AND number = ?")
    .bind(project, number)
    .first<{ state: string; iteration: number; seq: number }>();
}

describe("IssueDO applies the table", () => {
  const project = freshProject("table");
  let issues = 0;

  /** The context the pure table reaches along the state's sample path. */
  const contextAt = (state: State) =>
    PATHS[state].reduce((c, e) => {
      const o = transition(c, e);
      if (!o.ok) throw new Error(o.reason);
      return o.next;
    }, INITIAL_CONTEXT);

  /** The probe's result, the object's state and its last history entry agree with the pure table. */
  async function probe(number: number, state: State, type: EventType, id: string) {
    const stub = issueStub(env, project, number);
    const at = `${state} × ${type}`;
    const context = contextAt(state);
    const event = sample(type, state);
    const expected = transition(context, event);
    const result = await stub.apply(envelope(project, number, event, id));
    if (result.outcome === "invalid") throw new Error(`${at}: ${result.reason}`);
    const view = await stub.view();
    const awaits = expected.ok ? null : awaitsLaterState(context, event);
    if (!expected.ok && awaits) {
      // Early, not wrong: it waits on the issue, its id unspent (src/domain/early-events.ts).
      const reason = `${expected.reason}; parked until ${awaits}`;
      expect(result, at).toMatchObject({ outcome: "parked", state, reason });
      expect(view?.state, at).toBe(state);
      expect(view?.history.at(-1), at).toMatchObject({ eventId: `${id}:parked`, event: type, reason });
      return result;
    }
    if (expected.ok) {
      expect(result, at).toMatchObject({ outcome: "applied", state: expected.next.state });
      expect(view?.state, at).toBe(expected.next.state);
    } else {
      // A rejection is recorded with its reason and changes nothing.
      expect(result, at).toMatchObject({ outcome: "rejected", state, reason: expected.reason });
      expect(view?.state, at).toBe(state);
    }
    expect(view?.history.at(-1), at).toMatchObject({
      eventId: id,
      event: type,
      outcome: result.outcome,
      reason: result.reason,
    });
    return result;
  }

  // Every (state, event) pair. A rejection changes nothing, so one object per state takes every event the
  // table rejects there, one after another (a rejection that changed the state or its context would show in
  // the next probe); each applied event gets an object of its own.
  it.each(STATES)("%s × every event", async (state) => {
    const context = contextAt(state);
    const applies = (type: EventType) => transition(context, sample(type, state)).ok;
    const rejected = EVENT_TYPES.filter((type) => !applies(type));

    const shared = ++issues;
    const stub = await drive(project, shared, PATHS[state]);
    for (const type of rejected) await probe(shared, state, type, `probe-${type}`);
    await stub.drain();
    const rows = await d1Transitions(project, shared);
    const early = (type: EventType) => awaitsLaterState(context, sample(type, state)) !== null;
    expect(rows.slice(PATHS[state].length).map((r) => [r.event, r.outcome, r.to_state])).toEqual(
      rejected.map((type) => [type, early(type) ? "parked" : "rejected", state]),
    );

    await Promise.all(
      EVENT_TYPES.filter(applies).map(async (type) => {
        const number = ++issues;
        const own = await drive(project, number, PATHS[state]);
        const result = await probe(number, state, type, "probe");
        await own.drain();
        const rows = await d1Transitions(project, number);
        expect(rows, `${state} × ${type}`).toHaveLength(PATHS[state].length + 1);
        expect(rows.at(-1)).toMatchObject({ event: type, outcome: "applied", to_state: result.state });
      }),
    );
  });
});

describe("IssueDO durability", () => {
  it("applies a duplicated event once", async () => {
    const project = freshProject("dup");
    const stub = issueStub(env, project, 1);
    const e = envelope(project, 1, { type: "triage", blockers: [] }, "delivery-42");
    const first = await stub.apply(e);
    const second = await stub.apply(e);
    expect(first).toMatchObject({ duplicate: false, seq: 1, state: "queued" });
    expect(second).toMatchObject({ duplicate: true, seq: 1, state: "queued" });
    expect((await stub.view())?.history).toHaveLength(1);
    await stub.drain();
    expect(await d1Transitions(project, 1)).toHaveLength(1);
  });

  it("refuses an event addressed to another issue", async () => {
    const project = freshProject("addr");
    const stub = await drive(project, 1, PATHS.queued);
    expect(await stub.apply(envelope(project, 2, { type: "abandon", by: "op" }, "x"))).toEqual({
      duplicate: false,
      outcome: "invalid",
      reason: `event for ${project}#2 sent to ${project}#1`,
    });
    expect((await stub.view())?.state).toBe("queued");
  });

  it("keeps state, history and timers across eviction", async () => {
    const project = freshProject("evict");
    const stub = await drive(project, 1, PATHS.awaiting_ci);
    const before = await stub.view();
    await evictDurableObject(stub);
    const after = await stub.view();
    // Everything but the outbox, which delivery keeps changing in the background.
    expect({ ...after, outbox: [] }).toEqual({ ...before, outbox: [] });
    expect(after).toMatchObject({
      state: "awaiting_ci",
      iteration: 1,
      branch: "conveyor/7",
      sessionId: "sess-1",
    });
    expect(after?.timers.map((t) => t.kind)).toEqual(["ci"]);
  });

  it("delivers the outbox to D1 through failures, losing and doubling no edge", async () => {
    const project = freshProject("outbox");
    const trigger = `fail_${project.replaceAll("-", "_")}`;
    // A real D1 failure: a trigger aborts writes for this project's index rows only.
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON issues WHEN NEW.project_id = '${project}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`,
    );
    const started = Date.now();
    const stub = await drive(project, 1, PATHS.awaiting_review);
    await stub.drain();
    const failing = await stub.view();
    // At least the drain's attempt failed; the safety-net alarm may have tried again on a loaded machine.
    const d1 = failing?.outbox.find((o) => o.channel === "d1");
    expect(d1).toMatchObject({ pending: 4, lastError: expect.stringContaining("injected failure") });
    expect(d1?.attempts).toBeGreaterThanOrEqual(1);
    // The batch is one transaction: not even the transitions rows landed.
    expect(await d1Transitions(project, 1)).toEqual([]);

    // An earlier attempt's write that landed without its ack being recorded must not double.
    await env.DB.prepare(
      `INSERT INTO transitions (project_id, number, seq, from_state, to_state, event, event_id, cause_kind, cause_id, outcome, at)
       VALUES (?, 1, 1, 'new', 'queued', 'triage', 'path-0', 'system', 'test', 'applied', 0)`,
    )
      .bind(project)
      .run();
    await env.DB.exec(`DROP TRIGGER ${trigger}`);
    // Backoff: each row waits out the retry delay of its attempt count, and the alarm is armed for the earliest.
    // (Bounds, not a "not sent yet" check: on a slow machine the delay may already have passed, and the alarm
    // may have retried once more before the trigger went.)
    const { alarm, waiting } = await runInDurableObject(stub, async (_, state) => ({
      alarm: await state.storage.getAlarm(),
      waiting: state.storage.sql
        .exec<{ next_at: number; attempts: number }>(
          "SELECT next_at, attempts FROM outbox WHERE channel = 'd1'",
        )
        .toArray(),
    }));
    const readAt = Date.now();
    const longest = (attempts: number) => backoffDelay(attempts, { ...OUTBOX_BACKOFF, jitter: 0 });
    for (const row of waiting) {
      expect(row.next_at).toBeGreaterThanOrEqual(
        started + OUTBOX_BACKOFF.baseMs * (1 - OUTBOX_BACKOFF.jitter),
      );
      expect(row.next_at).toBeLessThanOrEqual(readAt + longest(row.attempts));
    }
    const nextAt = waiting.map((r) => r.next_at);
    if (nextAt.length > 0) expect(alarm).toBeLessThanOrEqual(Math.min(...nextAt));
    await new Promise((r) => setTimeout(r, Math.max(...nextAt) - Date.now() + 1));
    await stub.drain();

    expect((await stub.view())?.outbox.find((o) => o.channel === "d1")).toBeUndefined();
    const rows = await d1Transitions(project, 1);
    expect(rows.map((r) => [r.seq, r.from_state, r.to_state])).toEqual([
      [1, "new", "queued"],
      [2, "queued", "running"],
      [3, "running", "awaiting_ci"],
      [4, "awaiting_ci", "awaiting_review"],
    ]);
    expect(await d1Issue(project, 1)).toEqual({ state: "awaiting_review", iteration: 1, seq: 4 });
  });

  it("re-arms delivery after a restart that lost the alarm", async () => {
    const project = freshProject("rearm");
    const stub = await drive(project, 1, PATHS.queued);
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAlarm();
    });
    await evictDurableObject(stub);
    // Waking the object (any call) re-arms the alarm for the undelivered outbox.
    await stub.view();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await stub.drain();
    expect(await d1Issue(project, 1)).toMatchObject({ state: "queued" });
  });
});

describe("IssueDO waits out an effect's backoff", () => {
  it("arms its alarm for the retried head of a lane, not for the effects queued behind it", async () => {
    // Not registered: each effect fails and is retried with backoff. On the way to abandoned the issue queues
    // a job, cancels jobs and queues its worktree's reap, in the jobs' lane and strictly in order.
    const project = freshProject("lane-wait");
    const stub = await drive(project, 1, PATHS.abandoned);
    await stub.drain();
    const jobs = laneChannels().find((lane) => lane.includes("effect:enqueue_job")) ?? [];
    const { alarm, lane, now } = await runInDurableObject(stub, async (_instance, state) => ({
      alarm: await state.storage.getAlarm(),
      lane: state.storage.sql
        .exec<{ attempts: number; next_at: number }>(
          `SELECT attempts, next_at FROM outbox WHERE channel IN (${jobs.map(() => "?").join(", ")}) ORDER BY id`,
          ...jobs,
        )
        .toArray(),
      now: Date.now(),
    }));
    const [head, ...behind] = lane;
    expect(head?.attempts).toBeGreaterThan(0);
    expect(head?.next_at).toBeGreaterThan(now);
    expect(behind.length).toBeGreaterThan(0);
    for (const row of behind) expect(row.next_at).toBeLessThanOrEqual(now);
    // Every lane's head was tried and put off: nothing can go before the earliest backoff ends. An alarm set
    // for a row behind a head would find nothing to send, re-arm at once, and spin until the head is due.
    expect(alarm).toBeGreaterThan(now);
  });
});

/**
 * Runs the object's alarm now. Its effects fail (the project is not registered) and are retried from its own
 * alarm too: while that run is under way no alarm is set, and the run re-arms it as it ends.
 */
async function runAlarm(stub: DurableObjectStub): Promise<void> {
  while (!(await runDurableObjectAlarm(stub))) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("IssueDO timeouts fire from its alarm", () => {
  const cases: [State, TimerKind, State, string][] = [
    ["running", "session", "escalated", "session exceeded its wall-clock limit"],
    ["revising", "session", "escalated", "session exceeded its wall-clock limit"],
    ["awaiting_ci", "ci", "escalated", "CI did not report in time"],
    ["awaiting_review", "review", "escalated", "the review did not arrive in time"],
    ["escalated", "escalation", "abandoned", "no human answered within the escalation window"],
    // Only a reminder: the issue keeps its place in the queue, saying why it waits.
    [
      "queued",
      "dispatch",
      "queued",
      "no runner has started its job within timeouts.dispatch: check that a runner serving this project is online and that the daily budget has not paused dispatch",
    ],
  ];

  it.each(cases)("%s: the %s timer → %s", async (state, timer, to, reason) => {
    const project = freshProject(`timer-${timer}`);
    const stub = await drive(project, 1, PATHS[state]);
    await stub.drain();
    const armed = (await stub.view())?.timers;
    expect(armed?.map((t) => t.kind)).toContain(timer);
    await runAlarm(stub);
    // Nothing is due yet: the alarm ran but the timer stays.
    expect((await stub.view())?.state).toBe(state);

    // Let the clock pass the deadline: move the due time into the past, as time would.
    await runInDurableObject(stub, (_instance, s) => {
      s.storage.sql.exec("UPDATE timers SET due_at = 0");
    });
    await runAlarm(stub);
    const view = await stub.view();
    expect(view).toMatchObject({ state: to, reason });
    expect(view?.history.at(-1)).toMatchObject({
      event: "timeout",
      cause: { kind: "timer" },
      outcome: "applied",
    });
    await stub.drain();
    expect((await d1Transitions(project, 1)).at(-1)).toMatchObject({ event: "timeout", to_state: to });
  });

  it("a continuation's session timer starts when its job is dispatched; a redispatch does not extend it", async () => {
    const project = freshProject("timer-dispatch");
    const waiting = PATHS.revising.filter((e) => e.type !== "dispatched" || e.jobId !== "job-2");
    const stub = await drive(project, 1, waiting);
    // Revising, its job not dispatched yet (a paused daily budget): no session timer runs, the wait for a
    // runner does.
    const view = await stub.view();
    expect(view).toMatchObject({ state: "revising" });
    expect(view?.timers.map((t) => t.kind)).toEqual(["dispatch"]);

    const dispatched = { type: "dispatched", jobId: "job-2", runnerId: "runner-1", attempt: 1 } as const;
    await stub.apply(envelope(project, 1, dispatched, "dispatch-1"));
    const [armed] = (await stub.view())?.timers ?? [];
    expect(armed?.kind).toBe("session");
    const redispatched = { ...dispatched, runnerId: "runner-2", attempt: 2 } as const;
    await stub.apply(envelope(project, 1, redispatched, "dispatch-2"));
    expect((await stub.view())?.timers).toEqual([armed]);
  });

  it("reaps an escalated issue's worktree when its retention ends, and runs no second retention", async () => {
    const project = freshProject("retention");
    const timeouts = { session: 1_000, ci: 2_000, review: 3_000, escalation: 60_000, retention: 5_000 };
    const stub = await drive(project, 1, PATHS.escalated, { timeouts });
    const escalatedAt = (await stub.view())?.history.at(-1)?.at ?? 0;
    const relative = async () =>
      new Map((await stub.view())?.timers.map((t) => [t.kind, t.dueAt - escalatedAt]));
    expect(await relative()).toEqual(
      new Map([
        ["retention", 5_000],
        ["escalation", 60_000],
        ["renotify", DEFAULT_TIMEOUTS_MS.renotify],
      ]),
    );
    // A reply meanwhile restarts the state's timer, never the retention.
    const reply: LifecycleEvent = { type: "reply", thread: 1, text: "noted" };
    await stub.apply(envelope(project, 1, reply, "reply-1"));
    expect((await stub.view())?.timers.find((t) => t.kind === "retention")?.dueAt).toBe(escalatedAt + 5_000);

    const jobsLane = async () =>
      (await stub.view())?.outbox.find((o) => o.channel === "effect:enqueue_job")?.pending ?? 0;
    const enqueuedBefore = await jobsLane();
    await runInDurableObject(stub, (_instance, s) => {
      s.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE kind = 'retention'");
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const view = await stub.view();
    expect(view?.state).toBe("escalated");
    expect(view?.history.at(-1)).toMatchObject({ event: "timeout", outcome: "applied", to: "escalated" });
    expect(view?.timers.map((t) => t.kind).sort()).toEqual(["escalation", "renotify"]);
    // The reap job waits in the jobs lane (this project is not registered, so it is not delivered here).
    expect(await jobsLane()).toBe(enqueuedBefore + 1);
  });

  it("uses the project's timeouts", async () => {
    const project = freshProject("timeouts");
    const timeouts = { session: 1_000, ci: 2_000, review: 3_000, escalation: 4_000, retention: 5_000 };
    const stub = await drive(project, 1, PATHS.awaiting_ci, { timeouts });
    const [timer] = (await stub.view())?.timers ?? [];
    const at = (await stub.view())?.history.at(-1)?.at ?? 0;
    expect(timer?.dueAt).toBe(at + 2_000);
  });
});

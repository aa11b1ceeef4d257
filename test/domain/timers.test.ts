import { describe, expect, it } from "vitest";
import {
  DEFAULT_TIMEOUTS_MS,
  EVENT_TYPES,
  type LifecycleEvent,
  STATES,
  type State,
} from "../../src/domain/lifecycle.ts";
import { armTimers, type Timer, timersFor } from "../../src/domain/timers.ts";
import { sample } from "../support/lifecycle-samples.ts";

const timeouts = { ...DEFAULT_TIMEOUTS_MS, escalation: 24_000, renotify: 6_000, merge: 500 };
const event: LifecycleEvent = { type: "pr_opened", number: 4, byConveyor: true };

describe("timersFor", () => {
  // awaiting_approval's way out is its vault item's expiry (test/worker/vault.test.ts).
  it("every state that waits has a way out", () => {
    const waiting = STATES.filter((s) => timersFor(s).length > 0);
    expect(waiting).toEqual([
      "queued",
      "running",
      "awaiting_ci",
      "awaiting_review",
      "revising",
      "merging",
      "escalated",
    ]);
    expect(timersFor("escalated")).toEqual(["escalation", "renotify"]);
  });
});

describe("armTimers", () => {
  it("entering a state arms its timers from now", () => {
    const edge = { from: "awaiting_ci", to: "escalated", event, seq: 9, now: 1_000 } as const;
    expect(armTimers(edge, [{ kind: "ci", dueAt: 5, armedSeq: 3 }], timeouts)).toEqual([
      { kind: "escalation", dueAt: 25_000, armedSeq: 9 },
      { kind: "renotify", dueAt: 7_000, armedSeq: 9 },
    ]);
  });

  it("an edge that stays keeps the running deadlines", () => {
    const running: Timer[] = [{ kind: "session", dueAt: 50, armedSeq: 2 }];
    const dispatched: LifecycleEvent = { type: "dispatched", jobId: "j", runnerId: "r" };
    const edge = { from: "running", to: "running", event: dispatched, seq: 5, now: 40 } as const;
    expect(armTimers(edge, running, timeouts)).toEqual(running);
  });

  it("a reminder that fired is armed for its next round; the expiry keeps its time", () => {
    const escalation: Timer = { kind: "escalation", dueAt: 25_000, armedSeq: 9 };
    const fired: LifecycleEvent = { type: "timeout", timer: "renotify" };
    const edge = { from: "escalated", to: "escalated", event: fired, seq: 10, now: 7_000 } as const;
    expect(armTimers(edge, [escalation], timeouts)).toEqual([
      escalation,
      { kind: "renotify", dueAt: 13_000, armedSeq: 10 },
    ]);
  });

  it("leaving for a state without timers clears them", () => {
    const edge = { from: "merging", to: "merged", event, seq: 3, now: 0 } as const;
    expect(armTimers(edge, [{ kind: "merge", dueAt: 500, armedSeq: 2 }], timeouts)).toEqual([]);
  });
});

describe("the dispatch timer", () => {
  const edge = (from: State, to: State, e: LifecycleEvent) => ({ from, to, event: e, seq: 9, now: 1_000 });
  const triage: LifecycleEvent = { type: "triage", blockers: [] };

  it("runs while the issue waits in the queue, and again every period once it fired", () => {
    const armed = armTimers(edge("new", "queued", triage), [], timeouts);
    expect(armed).toEqual([{ kind: "dispatch", dueAt: 1_000 + timeouts.dispatch, armedSeq: 9 }]);
    const fired: LifecycleEvent = { type: "timeout", timer: "dispatch" };
    const later = { from: "queued", to: "queued", event: fired, seq: 12, now: 5_000 } as const;
    expect(armTimers(later, armed, timeouts)).toEqual([
      { kind: "dispatch", dueAt: 5_000 + timeouts.dispatch, armedSeq: 12 },
    ]);
  });
});

describe("the session timer", () => {
  const dispatched: LifecycleEvent = { type: "dispatched", jobId: "j", runnerId: "r", attempt: 1 };
  const session = (dueAt: number): Timer => ({ kind: "session", dueAt, armedSeq: 3 });
  const edge = (from: State, to: State, e: LifecycleEvent) => ({ from, to, event: e, seq: 9, now: 1_000 });

  const waits: Timer = { kind: "dispatch", dueAt: 1_000 + timeouts.dispatch, armedSeq: 9 };

  it("does not run while a continuation waits for its job (a paused daily budget): the dispatch wait does", () => {
    const red: LifecycleEvent = { type: "ci", result: "red", headSha: "s1" };
    expect(armTimers(edge("awaiting_ci", "revising", red), [], timeouts)).toEqual([waits]);
    const reply: LifecycleEvent = { type: "human_reply", author: "alice", text: "go on" };
    expect(armTimers(edge("escalated", "revising", reply), [], timeouts)).toEqual([waits]);
    // Still waiting: a pull request number linked meanwhile keeps the dispatch wait as it was.
    expect(armTimers(edge("revising", "revising", event), [waits], timeouts)).toEqual([waits]);
  });

  it.each([
    ["queued", "running"],
    ["revising", "revising"],
  ] as const)("starts when the job is dispatched (%s → %s), ending the dispatch wait", (from, to) => {
    expect(armTimers(edge(from, to, dispatched), [waits], timeouts)).toEqual([
      { kind: "session", dueAt: 1_000 + timeouts.session, armedSeq: 9 },
    ]);
  });

  it.each(EVENT_TYPES)("is not restarted by %s during the session (a redispatch included)", (type) => {
    const running = [session(60_000)];
    for (const state of ["running", "revising"] as const) {
      const e = sample(type, state);
      if (e.type === "timeout" && e.timer === "session") continue;
      // A phase that stays in revising ended the session: the next one's timers start (below).
      if (e.type === "phase" && state === "revising") continue;
      expect(armTimers(edge(state, state, e), running, timeouts)).toEqual(running);
    }
  });

  it("starts afresh for the next session when a phase keeps the issue revising (people's round waited)", () => {
    const phase: LifecycleEvent = { type: "phase", phase: "awaiting_ci", headSha: "s2" };
    expect(armTimers(edge("revising", "revising", phase), [session(60_000)], timeouts)).toEqual([waits]);
  });
});

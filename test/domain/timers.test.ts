import { describe, expect, it } from "vitest";
import { DEFAULT_TIMEOUTS_MS, type LifecycleEvent, STATES } from "../../src/domain/lifecycle.ts";
import { armTimers, type Timer, timersFor } from "../../src/domain/timers.ts";

const timeouts = { ...DEFAULT_TIMEOUTS_MS, escalation: 24_000, renotify: 6_000, merge: 500 };
const event: LifecycleEvent = { type: "pr_opened", number: 4, byConveyor: true };

describe("timersFor", () => {
  it("every state that waits has a way out", () => {
    const waiting = STATES.filter((s) => timersFor(s).length > 0);
    expect(waiting).toEqual([
      "running",
      "awaiting_ci",
      "awaiting_review",
      "revising",
      "awaiting_approval",
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

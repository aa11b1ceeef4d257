import { describe, expect, it } from "vitest";
import { DEFAULT_TIMEOUTS_MS, EVENT_TYPES, STATES, timerFor } from "../../src/domain/lifecycle.ts";
import { type ArmedTimer, timerAfter } from "../../src/domain/timers.ts";

const NOW = 1_000_000;
const SEQ = 9;
const step = (patch: Partial<Parameters<typeof timerAfter>[0]>) =>
  timerAfter({
    from: "awaiting_ci",
    to: "revising",
    event: "ci",
    current: null,
    now: NOW,
    seq: SEQ,
    timeouts: DEFAULT_TIMEOUTS_MS,
    ...patch,
  });
const session = (dueAt: number): ArmedTimer => ({ kind: "session", dueAt, armedSeq: 3 });

describe("the session timer", () => {
  it("does not run while a continuation waits for its job (a paused daily budget)", () => {
    expect(
      step({ from: "awaiting_ci", to: "revising", event: "ci", current: { ...session(5), kind: "ci" } }),
    ).toBe(null);
    expect(step({ from: "escalated", to: "revising", event: "human_reply" })).toBeNull();
    // Still waiting: a reply or a pull request number while queued arms nothing either.
    expect(step({ from: "revising", to: "revising", event: "reply" })).toBeNull();
  });

  it.each([
    ["queued", "running"],
    ["revising", "revising"],
  ] as const)("starts when the job is dispatched (%s → %s)", (from, to) => {
    expect(step({ from, to, event: "dispatched" })).toEqual({
      kind: "session",
      dueAt: NOW + DEFAULT_TIMEOUTS_MS.session,
      armedSeq: SEQ,
    });
  });

  it.each(EVENT_TYPES)("is not restarted by %s during the session (a redispatch included)", (event) => {
    const current = session(NOW + 60_000);
    expect(step({ from: "running", to: "running", event, current })).toBe(current);
    expect(step({ from: "revising", to: "revising", event, current })).toBe(current);
  });
});

describe("every other timer", () => {
  it.each(STATES.filter((s) => timerFor(s) !== null && timerFor(s) !== "session"))(
    "%s: armed on entering the state",
    (to) => {
      const kind = timerFor(to);
      if (kind === null) throw new Error("no timer");
      expect(step({ from: "running", to, event: "phase" })).toEqual({
        kind,
        dueAt: NOW + DEFAULT_TIMEOUTS_MS[kind],
        armedSeq: SEQ,
      });
    },
  );

  it.each(STATES.filter((s) => timerFor(s) === null))("%s: none", (to) => {
    expect(step({ from: "running", to, event: "phase", current: session(NOW) })).toBeNull();
  });
});

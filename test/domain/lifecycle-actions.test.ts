import { describe, expect, it } from "vitest";
import { awaitsLaterState } from "../../src/domain/early-events.ts";
import {
  EVENT_TYPES,
  type EventType,
  edges,
  holdsSlot,
  INITIAL_CONTEXT,
  type IssueContext,
  type LifecycleEvent,
  NOT_DISPATCHED,
  type Outcome,
  STATES,
  type State,
  TERMINAL_STATES,
  transition,
} from "../../src/domain/lifecycle.ts";
import { parsePhaseFile } from "../../src/domain/phase.ts";
import { armTimers, timersFor } from "../../src/domain/timers.ts";
import { sample } from "../support/lifecycle-samples.ts";

/** An action issue sitting in `state`, its session started where the state implies one. */
function action(state: State, patch: Partial<IssueContext> = {}): IssueContext {
  const started = state !== "new" && state !== "blocked" && state !== "queued";
  return {
    ...INITIAL_CONTEXT,
    state,
    kind: "action",
    formula: "rotate-token",
    iteration: started ? 1 : 0,
    sessionId: started ? "sess-1" : null,
    job: started ? { id: "job-1", attempt: 1 } : null,
    vaultStep: state === "awaiting_approval" ? "rotate" : null,
    vaultItem: state === "awaiting_approval" ? "v1" : null,
    ...patch,
  };
}

function accepted(outcome: Outcome): Extract<Outcome, { ok: true }> {
  if (!outcome.ok) throw new Error(`rejected: ${outcome.reason}`);
  return outcome;
}

/** The representative event an action sees in each (state, event) pair where its rules are its own. */
function actionSample(type: EventType, state: State): LifecycleEvent {
  if (type === "phase") return { type, phase: "done", jobId: "job-1", sessionId: "sess-1", summary: "ok" };
  if (type === "timeout" && state === "escalated") return { type, timer: "idle" };
  return sample(type, state);
}

// Where an action's rules differ from a code issue's; every other pair must behave as the code table does.
const OWN: Partial<Record<State, Partial<Record<EventType, State | "rejected">>>> = {
  running: { phase: "done" },
  awaiting_approval: {
    vault_requested: "awaiting_approval",
    vault_decision: "running",
    human_approval: "awaiting_approval",
  },
  escalated: { human_reply: "running", timeout: "abandoned" },
};

describe("an action issue, every (state, event) pair", () => {
  const pairs = STATES.flatMap((state) => EVENT_TYPES.map((event) => [state, event] as const));

  it.each(pairs)("%s × %s", (state, type) => {
    const event = actionSample(type, state);
    const outcome = transition(action(state), event);
    const own = OWN[state]?.[type];
    if (own === undefined) {
      // The code issue's rule, applied to the action: the same edge (or the same refusal).
      const code = transition({ ...action(state), kind: "code" }, event);
      expect(outcome.ok).toBe(code.ok);
      if (outcome.ok && code.ok) expect(outcome.next.state).toBe(code.next.state);
      return;
    }
    if (own === "rejected") {
      expect(outcome.ok).toBe(false);
      return;
    }
    const { next } = accepted(outcome);
    expect(next.state).toBe(own);
    expect(next.kind).toBe("action");
    expect(edges("action").some((e) => e.from === state && e.event === type && e.to === own)).toBe(true);
  });

  it("never enters a pull request's states", () => {
    const prStates: State[] = ["awaiting_ci", "awaiting_review", "revising", "merging", "merged"];
    expect(edges("action").filter((e) => prStates.includes(e.to))).toEqual([]);
  });
});

describe("an action's run", () => {
  it("a triage that names a formula makes the issue an action; a writer's later one without it, code", () => {
    const { next } = accepted(
      transition(INITIAL_CONTEXT, { type: "triage", blockers: [], action: { formula: "rotate-token" } }),
    );
    expect(next).toMatchObject({ state: "queued", kind: "action", formula: "rotate-token" });
    const blocked = { ...next, state: "blocked" as const, blockers: ["#2"] };
    // A regate without a writer's brief (a dependency closed) keeps the kind.
    expect(accepted(transition(blocked, { type: "triage", blockers: [] })).next.kind).toBe("action");
    const brief = { title: "t", body: "b", by: "alice" };
    expect(accepted(transition(blocked, { type: "triage", blockers: [], brief })).next.kind).toBe("code");
  });

  it("done closes the issue with the session's summary", () => {
    const { next, effects } = accepted(
      transition(action("running"), {
        type: "phase",
        phase: "done",
        jobId: "job-1",
        sessionId: "sess-1",
        summary: "Rotated the token; the new one is live.",
      }),
    );
    expect(next.state).toBe("done");
    expect(TERMINAL_STATES).toContain("done");
    expect(holdsSlot("done")).toBe(false);
    expect(effects).toEqual([
      {
        kind: "comment",
        body: "**The action is done.**",
        // The session's words, quoted apart under its name when posted.
        quote: { by: "Its session", text: "Rotated the token; the new one is live." },
      },
      { kind: "close_issue" },
      { kind: "labels", add: [], remove: ["in_progress", "needs_human", "backlog", "blocked"] },
      { kind: "enqueue_job", job: "reap" },
      { kind: "notify_dependents" },
    ]);
  });

  it("a done the Worker refused (its dangerous step never fired) escalates with the refusal, closing nothing", () => {
    const refused =
      "the session said the action is done, but step rotate of formula rotate-token did not run";
    const { next, effects } = accepted(
      transition(action("running"), { type: "phase", phase: "done", jobId: "job-1", refused }),
    );
    expect(next).toMatchObject({ state: "escalated", reason: refused });
    expect(effects.map((e) => e.kind)).not.toContain("close_issue");
  });

  it("a dangerous step waits for the vault, holding no slot", () => {
    const { next, effects } = accepted(
      transition(action("running"), { type: "phase", phase: "vault", step: "rotate", jobId: "job-1" }),
    );
    expect(next).toMatchObject({ state: "awaiting_approval", vaultStep: "rotate" });
    expect(holdsSlot(next.state)).toBe(false);
    expect(effects).toEqual([
      { kind: "labels", add: [], remove: ["in_progress"] },
      { kind: "vault_step", step: "rotate" },
    ]);
  });

  it("PHASE:vault without a step escalates; a code session's PHASE:vault escalates too", () => {
    const bare = accepted(transition(action("running"), { type: "phase", phase: "vault", jobId: "job-1" }));
    expect(bare.next).toMatchObject({
      state: "escalated",
      reason: expect.stringMatching(/without naming the step/),
    });
    const code = accepted(
      transition({ ...action("running"), kind: "code" }, { type: "phase", phase: "vault", step: "x" }),
    );
    expect(code.next).toMatchObject({ state: "escalated", reason: expect.stringMatching(/not an action/) });
  });

  it("an approval resumes the same session, and only its job carries the approved step", () => {
    const { next, effects } = accepted(
      transition(action("awaiting_approval"), {
        type: "vault_decision",
        itemId: "v1",
        decision: "approved",
        by: "alice",
      }),
    );
    expect(next).toMatchObject({ state: "running", vaultStep: null, sessionId: "sess-1", iteration: 2 });
    expect(next.job).toEqual(NOT_DISPATCHED);
    expect(effects).toEqual([
      { kind: "labels", add: ["in_progress"], remove: ["needs_human"] },
      {
        kind: "enqueue_job",
        job: "resume",
        reason: "vault",
        approved: { step: "rotate", item: "v1" },
        detail: "The vault approved step rotate (item v1, by alice). Run it now with run_step.",
      },
    ]);
    // The resumed job's phase is the session's; the earlier job's is stale.
    const stale = transition(next, { type: "phase", phase: "done", jobId: "job-1", attempt: 1 });
    expect(stale.ok).toBe(false);
  });

  it.each([
    ["rejected", "the vault rejected step rotate (item v1, by bob: not today)"],
    ["expired", "nobody decided on step rotate before its vault item v1 expired"],
  ] as const)("a %s item stops the action with a comment saying why", (decision, why) => {
    const { next, effects } = accepted(
      transition(action("awaiting_approval"), {
        type: "vault_decision",
        itemId: "v1",
        decision,
        by: "bob",
        ...(decision === "rejected" && { reason: "not today" }),
      }),
    );
    expect(next).toMatchObject({
      state: "abandoned",
      reason: `the action stops: ${why}`,
      vaultStep: null,
      vaultItem: null,
    });
    expect(effects).toEqual([
      { kind: "comment", body: `The action stops: ${why}.` },
      { kind: "labels", add: [], remove: ["needs_human"] },
      { kind: "labels", add: [], remove: ["in_progress", "blocked"] },
      { kind: "enqueue_job", job: "reap" },
    ]);
  });

  it("a decision with no step waiting, or in another state, is refused", () => {
    const decision = { type: "vault_decision", itemId: "v", decision: "approved", by: "a" } as const;
    expect(transition(action("awaiting_approval", { vaultStep: null }), decision).ok).toBe(false);
    expect(transition(action("running"), decision).ok).toBe(false);
    expect(transition(action("escalated"), decision).ok).toBe(false);
  });

  it("a human's reply resumes the session; nobody answering for the idle time stops it", () => {
    const asked = accepted(
      transition(action("running"), {
        type: "phase",
        phase: "escalate",
        reason: "which region?",
        jobId: "job-1",
      }),
    );
    expect(asked.next.state).toBe("escalated");
    expect(timersFor("escalated", "action")).toEqual(["idle"]);
    const replied = accepted(
      transition(asked.next, { type: "human_reply", author: "alice", text: "eu-west" }),
    );
    expect(replied.next.state).toBe("running");
    expect(replied.effects).toContainEqual({
      kind: "enqueue_job",
      job: "resume",
      reason: "human",
      detail: "alice: eu-west",
    });
    const idle = accepted(transition(asked.next, { type: "timeout", timer: "idle" }));
    expect(idle.next.state).toBe("abandoned");
    expect(idle.effects[0]).toEqual({
      kind: "comment",
      body: "The action stops: nobody answered within the idle time (session escalated: which region?).",
    });
    // The code escalation's timers do not run for an action.
    expect(transition(asked.next, { type: "timeout", timer: "escalation" }).ok).toBe(false);
  });

  it("the idle timer is armed when an action escalates, not the escalation's", () => {
    const timeouts = {
      session: 1,
      ci: 1,
      review: 1,
      approval: 1,
      merge: 1,
      escalation: 1,
      renotify: 1,
      retention: 1,
      idle: 4,
      dispatch: 5,
    };
    const event: LifecycleEvent = { type: "phase", phase: "escalate" };
    const timers = armTimers(
      { from: "running", to: "escalated", event, seq: 3, now: 100, kind: "action" },
      [],
      timeouts,
    );
    expect(timers).toEqual([{ kind: "idle", dueAt: 104, armedSeq: 3 }]);
    const code = armTimers({ from: "running", to: "escalated", event, seq: 3, now: 100 }, [], timeouts);
    expect(code.map((t) => t.kind)).toEqual(["escalation", "renotify"]);
  });

  it("the vault's item id is recorded and named to the humans; a decision on another item is refused", () => {
    const asked = action("awaiting_approval", { vaultItem: null });
    const { next, effects } = accepted(transition(asked, { type: "vault_requested", itemId: "v7" }));
    expect(next).toMatchObject({ state: "awaiting_approval", vaultItem: "v7" });
    expect(effects).toEqual([
      { kind: "labels", add: ["needs_human"], remove: [] },
      {
        kind: "notify_human",
        reason: "step rotate of formula rotate-token is dangerous and waits for the vault (item v7)",
      },
    ]);
    const other = { type: "vault_decision", itemId: "v6", decision: "approved", by: "a" } as const;
    expect(transition(next, other)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not the one/),
    });
    // A decision that overtook `vault_requested` waits for it (parked, src/domain/early-events.ts).
    expect(transition(asked, other)).toMatchObject({ ok: false, reason: expect.stringMatching(/none yet/) });
    expect(awaitsLaterState(asked, other)).toBe("vault item v6 to be recorded (vault_requested)");
  });

  it("the operator's approval of the issue goes to the vault, which decides", () => {
    const { next, effects } = accepted(
      transition(action("awaiting_approval"), { type: "human_approval", by: "op" }),
    );
    expect(next.state).toBe("awaiting_approval");
    expect(effects).toEqual([{ kind: "vault_approve", itemId: "v1", by: "op" }]);
    const early = transition(action("awaiting_approval", { vaultItem: null }), {
      type: "human_approval",
      by: "op",
    });
    expect(early).toMatchObject({ ok: false, reason: expect.stringMatching(/does not hold the step yet/) });
  });

  it("an action session asking for CI escalates: an action has no pull request", () => {
    const { next } = accepted(
      transition(action("running"), {
        type: "phase",
        phase: "awaiting_ci",
        headSha: "abc1234",
        jobId: "job-1",
      }),
    );
    expect(next).toMatchObject({ state: "escalated", prOpened: false });
  });
});

describe("the phase file's Step line", () => {
  it("names the step of PHASE:vault", () => {
    expect(parsePhaseFile("PHASE:vault\nStep: rotate\nReason: revokes the old token")).toEqual({
      kind: "phase",
      phase: "vault",
      step: "rotate",
      reason: "revokes the old token",
    });
    expect(parsePhaseFile("PHASE:vault\nstep:  rotate  ")).toEqual({
      kind: "phase",
      phase: "vault",
      step: "rotate",
    });
  });

  it("is not read for other phases, nor when it is no step id", () => {
    expect(parsePhaseFile("PHASE:done\nStep: rotate")).toEqual({ kind: "phase", phase: "done" });
    expect(parsePhaseFile("PHASE:vault\nStep: ../../x")).toEqual({ kind: "phase", phase: "vault" });
    expect(parsePhaseFile("PHASE:vault\nStep: two words")).toEqual({ kind: "phase", phase: "vault" });
  });
});

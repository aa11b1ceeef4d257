import { describe, expect, it } from "vitest";
import {
  AUTOMATIC_RETRIES,
  ESCALATION_CAUSES,
  type EscalationCause,
  escalationCause,
  forgeUnreachable,
  isTransient,
  type Proposal,
  proposalComment,
  retriesAutomatically,
  TRANSIENT_CAUSES,
} from "../../src/domain/escalation.ts";
import {
  INITIAL_CONTEXT,
  type IssueContext,
  type LifecycleEvent,
  type Outcome,
  type State,
  transition,
} from "../../src/domain/lifecycle.ts";
import { HEAD, PATHS, PROPOSAL } from "../support/lifecycle-samples.ts";

function accepted(outcome: Outcome): Extract<Outcome, { ok: true }> {
  if (!outcome.ok) throw new Error(`rejected: ${outcome.reason}`);
  return outcome;
}

function rejected(outcome: Outcome): string {
  if (outcome.ok) throw new Error(`accepted into ${outcome.next.state}`);
  return outcome.reason;
}

/** The context after `events` from a new issue, each of which must apply. */
function through(events: readonly LifecycleEvent[], from: IssueContext = INITIAL_CONTEXT): IssueContext {
  return events.reduce((ctx, event) => accepted(transition(ctx, event)).next, from);
}

const at = (state: State) => through(PATHS[state]);

const LOST: LifecycleEvent = {
  type: "phase",
  phase: "failed",
  reason: "lease expired on attempt 3 of 3",
  lost: true,
};

describe("the cause of an escalation", () => {
  // One event per cause, from a state where it escalates the issue.
  const CASES: [EscalationCause, State, LifecycleEvent][] = [
    ["session_escalated", "running", { type: "phase", phase: "escalate", reason: "which units?" }],
    ["underspecified", "running", { type: "phase", phase: "escalate", reason: "underspecified: too big" }],
    ["session_failed", "running", { type: "phase", phase: "failed", reason: "cannot" }],
    ["session_failed", "running", { type: "phase", phase: "dry_exit" }],
    ["runner_unconfirmed", "queued", { type: "lease_unconfirmed", jobId: "job-1", count: 9, gaveUp: true }],
    ["session_timeout", "running", { type: "timeout", timer: "session" }],
    ["ci_timeout", "awaiting_ci", { type: "timeout", timer: "ci" }],
    ["review_timeout", "awaiting_review", { type: "timeout", timer: "review" }],
    ["critic_failed", "awaiting_review", { type: "review_failed", reason: "no report" }],
    ["critic_block", "awaiting_review", { type: "review", verdict: "BLOCK", summary: "harmful" }],
    [
      "head_mismatch",
      "awaiting_ci",
      { type: "head_mismatch", branch: "conveyor/7", claimed: HEAD, actual: null },
    ],
    ["merge_failed", "merging", { type: "merge_failed", reason: "protected" }],
    ["budget", "running", { type: "budget_exceeded", reason: "USD 5 of 5" }],
    ["dead_letter", "awaiting_ci", { type: "effect_failed", effect: "labels", error: "403", deadLetter: 4 }],
  ];

  it.each(CASES)("%s (from %s)", (cause, state, event) => {
    const { next } = accepted(transition(at(state), event));
    expect(next.escalation).toEqual({ n: 1, cause, from: state });
  });

  it("the caps: CI still red, the critic still asking for changes, the base still moving", () => {
    const limits = { maxCiFixes: 0, maxCriticIterations: 1, maxUpdates: 0, maxHumanRounds: 5 };
    const ci = accepted(transition(at("awaiting_ci"), { type: "ci", result: "red", headSha: HEAD }, limits));
    expect(ci.next.escalation?.cause).toBe("ci_cap");
    const critic = accepted(
      transition(
        at("awaiting_review"),
        { type: "review", verdict: "REQUEST_CHANGES", summary: "no" },
        limits,
      ),
    );
    expect(critic.next).toMatchObject({ state: "abandoned", escalation: { cause: "critic_cap" } });
    const behind = accepted(
      transition(at("awaiting_review"), { type: "branch_updated", headSha: "b2" }, limits),
    );
    expect(behind.next.escalation?.cause).toBe("base_updates");
  });

  it("every cause is named by some event, and an event that never escalates has none of its own", () => {
    const named = new Set(CASES.map(([cause]) => cause));
    // Tested below: the caps, and the transient causes once their automatic retry is spent.
    const below = [
      "ci_cap",
      "critic_cap",
      "base_updates",
      "runner_lost",
      "ci_infrastructure",
      "forge_unreachable",
    ];
    for (const cause of below as EscalationCause[]) named.add(cause);
    expect([...ESCALATION_CAUSES].filter((cause) => !named.has(cause))).toEqual(["other"]);
    expect(escalationCause({ type: "retry", by: "alice" })).toBe("other");
  });

  it("escalations are counted, and a new one forgets the proposal of the last", () => {
    const first = accepted(
      transition(at("running"), { type: "phase", phase: "failed", reason: "x", sessionId: "sess-1" }),
    ).next;
    const proposed = accepted(transition(first, { type: "triage_proposal", proposal: PROPOSAL })).next;
    expect(proposed.proposal).toEqual(PROPOSAL);
    const resumed = accepted(
      transition(proposed, { type: "human_reply", author: "alice", text: "go on" }),
    ).next;
    const second = accepted(
      transition(resumed, { type: "phase", phase: "escalate", reason: "stuck", jobId: "", attempt: 0 }),
    ).next;
    expect(second).toMatchObject({
      state: "escalated",
      escalation: { n: 2, from: "revising" },
      proposal: null,
    });
  });

  it("a reminder of an escalation is no new escalation", () => {
    const escalated = at("escalated");
    const { next } = accepted(transition(escalated, { type: "timeout", timer: "renotify" }));
    expect(next.escalation).toEqual(escalated.escalation);
  });
});

describe("which causes are retried automatically", () => {
  it("only the transient ones, each as often as the bound allows", () => {
    expect(AUTOMATIC_RETRIES).toBe(1);
    for (const cause of ESCALATION_CAUSES) {
      const transient = (TRANSIENT_CAUSES as readonly string[]).includes(cause);
      expect(isTransient(cause)).toBe(transient);
      expect(retriesAutomatically(cause, [])).toBe(transient);
      expect(retriesAutomatically(cause, [cause])).toBe(false);
      // Another cause's retry does not use this one's.
      for (const other of TRANSIENT_CAUSES.filter((c) => c !== cause))
        expect(retriesAutomatically(cause, [other])).toBe(transient);
    }
  });
});

describe("a runner lost on every attempt", () => {
  it("is retried once, saying so, instead of waiting for a human", () => {
    const { next, effects } = accepted(transition(at("running"), LOST));
    expect(next).toMatchObject({
      state: "queued",
      autoRetried: ["runner_lost"],
      sessionId: null,
      reason: "retried automatically after: session failed: lease expired on attempt 3 of 3",
    });
    expect(next.escalation ?? null).toBeNull();
    expect(effects).toEqual([
      { kind: "labels", add: [], remove: ["in_progress"] },
      {
        kind: "comment",
        body: expect.stringMatching(/^\*\*Retried automatically\.\*\* The session's runner was lost/),
      },
      { kind: "labels", add: [], remove: ["needs_human"] },
      { kind: "enqueue_job", job: "implement" },
    ]);
    expect(effects.some((e) => e.kind === "notify_human")).toBe(false);
  });

  it("a second time, the issue waits for a human with the cause recorded", () => {
    const retried = accepted(transition(at("running"), LOST)).next;
    const again = through([{ type: "dispatched", jobId: "job-2", runnerId: "runner-2" }], retried);
    const { next, effects } = accepted(transition(again, LOST));
    expect(next).toMatchObject({
      state: "escalated",
      escalation: { n: 1, cause: "runner_lost", from: "running" },
    });
    expect(effects).toContainEqual({ kind: "notify_human", reason: next.reason });
  });
});

describe("CI red for its infrastructure at the cap", () => {
  it("is retried once with a fresh session; a code failure at the cap is not", () => {
    const limits = { maxCiFixes: 0, maxCriticIterations: 3, maxUpdates: 3, maxHumanRounds: 5 };
    const red = { type: "ci" as const, result: "red" as const, headSha: HEAD };
    const infra = accepted(transition(at("awaiting_ci"), { ...red, infrastructure: true }, limits));
    expect(infra.next).toMatchObject({ state: "queued", autoRetried: ["ci_infrastructure"], ciFixes: 0 });
    const code = accepted(transition(at("awaiting_ci"), red, limits));
    expect(code.next).toMatchObject({ state: "escalated", escalation: { cause: "ci_cap" } });
  });
});

describe("effects given up on while the forge did not answer", () => {
  const failed = (deadLetter: number, transient = true): LifecycleEvent => ({
    type: "effect_failed",
    effect: "open_pull_request",
    error: "forgejo: POST /repos/o/r/pulls returned 502",
    deadLetter,
    ...(transient && { transient: true as const }),
  });

  it("wait for it while the issue goes on; later ones of the outage join them", () => {
    const first = accepted(transition(at("awaiting_ci"), failed(5)));
    expect(first.next).toMatchObject({
      state: "awaiting_ci",
      recovery: { deadLetters: [5], effect: "open_pull_request" },
    });
    expect(first.effects).toEqual([{ kind: "probe_forge" }]);
    const second = accepted(transition(first.next, failed(8)));
    expect(second.next.recovery?.deadLetters).toEqual([5, 8]);
    expect(second.effects).toEqual([]);
  });

  it("are sent again when it answers, once, and the issue says so", () => {
    const waiting = through([failed(5), failed(8)], at("awaiting_ci"));
    const { next, effects } = accepted(transition(waiting, { type: "forge_recovered", answered: true }));
    expect(next).toMatchObject({ state: "awaiting_ci", recovery: null, autoRetried: ["forge_unreachable"] });
    expect(effects).toEqual([
      { kind: "resend_dead_letters", ids: [5, 8] },
      { kind: "comment", body: expect.stringContaining("2 actions, the first `open_pull_request`") },
    ]);
    expect(rejected(transition(next, { type: "forge_recovered", answered: true }))).toBe(
      "no effect waits for the forge to answer again",
    );
    // The next outage is a human's.
    const later = accepted(transition(next, failed(11)));
    expect(later.next).toMatchObject({ state: "escalated", escalation: { cause: "forge_unreachable" } });
  });

  it("escalate as they would have at once when it stays silent past the wait", () => {
    const waiting = through([failed(5)], at("running"));
    const { next, effects } = accepted(transition(waiting, { type: "forge_recovered", answered: false }));
    expect(next).toMatchObject({
      state: "escalated",
      recovery: null,
      escalation: { cause: "forge_unreachable" },
    });
    expect(next.reason).toMatch(
      /gave up on an action \(open_pull_request\).*did not answer again within 24 h$/,
    );
    expect(effects[0]).toEqual({ kind: "cancel_jobs" });
  });

  it("wait in every state, a finished one too; a refusal for good escalates at once", () => {
    for (const state of ["escalated", "merged", "abandoned"] as const) {
      const { next, effects } = accepted(transition(at(state), failed(3)));
      expect(next).toMatchObject({ state, recovery: { deadLetters: [3] } });
      expect(effects).toEqual([{ kind: "probe_forge" }]);
    }
    const refused = accepted(transition(at("awaiting_ci"), failed(3, false)));
    expect(refused.next).toMatchObject({ state: "escalated", escalation: { cause: "dead_letter" } });
  });
});

const escalatedAt = (events: readonly LifecycleEvent[]) => through(events, at("running"));
const proposalOf = (step: Proposal["step"]): Proposal => ({ ...PROPOSAL, step });

describe("the triage's proposal", () => {
  const failed: LifecycleEvent = {
    type: "phase",
    phase: "failed",
    reason: "tests would not run",
    sessionId: "sess-1",
  };

  it("is kept and posted for the escalation it answers, under the agent's name", () => {
    const escalated = escalatedAt([failed]);
    const { next, effects } = accepted(
      transition(escalated, { type: "triage_proposal", proposal: PROPOSAL }),
    );
    expect(next.proposal).toEqual(PROPOSAL);
    expect(effects).toEqual([{ kind: "comment", ...proposalComment(PROPOSAL) }]);
    const { body, quote } = proposalComment(PROPOSAL);
    expect(body).toContain("Proposed next step: **retry with a hint**");
    expect(body).toContain("`/conveyor accept`");
    expect(quote).toEqual({
      by: "The agent `triage` (run `run_t1`)",
      text: `**What went wrong:** ${PROPOSAL.diagnosis}\n\n**Hint for the next session:** ${PROPOSAL.step.kind === "retry" ? PROPOSAL.step.hint : ""}`,
    });
  });

  it("is refused for another escalation, an issue that moved on, or twice", () => {
    const escalated = escalatedAt([failed]);
    expect(
      rejected(transition(escalated, { type: "triage_proposal", proposal: { ...PROPOSAL, escalation: 2 } })),
    ).toMatch(/^stale: the proposal answers escalation 2, and the issue is at escalation 1/);
    const resumed = through([{ type: "human_reply", author: "alice", text: "go" }], escalated);
    expect(rejected(transition(resumed, { type: "triage_proposal", proposal: PROPOSAL }))).toMatch(
      /^stale: the issue is revising/,
    );
    const proposed = through([{ type: "triage_proposal", proposal: PROPOSAL }], escalated);
    expect(rejected(transition(proposed, { type: "triage_proposal", proposal: PROPOSAL }))).toBe(
      "escalation 1 has its proposal already",
    );
  });
});

describe("a writer accepts the proposal", () => {
  const proposed = (step: Proposal["step"]) =>
    escalatedAt([
      { type: "phase", phase: "failed", reason: "x", sessionId: "sess-1" },
      { type: "triage_proposal", proposal: proposalOf(step) },
    ]);
  const accept: LifecycleEvent = { type: "accept", by: "alice" };

  it("retry: a fresh session given the hint", () => {
    const { next, effects } = accepted(
      transition(proposed({ kind: "retry", hint: "Use node --test." }), accept),
    );
    expect(next).toMatchObject({ state: "queued", proposal: null, sessionId: null });
    expect(effects).toEqual([
      { kind: "labels", add: [], remove: ["needs_human"] },
      { kind: "enqueue_job", job: "implement", reason: "triage", detail: "Use node --test." },
    ]);
    // Accepted once: the next accept finds nothing.
    expect(rejected(transition(next, accept))).toMatch(/no triage proposal waits|does not apply/);
  });

  it("abandon: the issue is abandoned in the writer's name", () => {
    const { next, effects } = accepted(transition(proposed({ kind: "abandon" }), accept));
    expect(next).toMatchObject({ state: "abandoned", reason: "abandoned by alice, as the triage proposed" });
    expect(effects).toContainEqual({ kind: "cancel_jobs" });
    // Accepting is a writer's decision, no new escalation: nothing asks for another triage.
    expect(effects.some((e) => e.kind === "request_triage" || e.kind === "notify_human")).toBe(false);
  });

  it("clarify: the question is asked and the issue labelled; it still waits for a reply", () => {
    const { next, effects } = accepted(
      transition(proposed({ kind: "clarify", question: "Which units?" }), accept),
    );
    expect(next).toMatchObject({ state: "escalated", proposal: null });
    expect(effects).toEqual([
      { kind: "labels", add: ["underspecified"], remove: [] },
      {
        kind: "comment",
        body: expect.stringContaining("a writer's reply resumes the session"),
        quote: { by: "The agent `triage` (run `run_t1`)", text: "Which units?" },
      },
    ]);
    expect(accepted(transition(next, { type: "human_reply", author: "alice", text: "KiB" })).next.state).toBe(
      "revising",
    );
  });

  it("split: the parts are filed in the writer's name and the issue closed", () => {
    const parts = [
      { title: "Parse", body: "Parse the input." },
      { title: "Print", body: "Print the tree." },
    ];
    const { next, effects } = accepted(transition(proposed({ kind: "split", parts }), accept));
    expect(next).toMatchObject({ state: "abandoned" });
    expect(next.reason).toBe("split into 2 issues, as the triage proposed (accepted by alice)");
    expect(effects.slice(0, 3)).toEqual([
      { kind: "cancel_jobs" },
      { kind: "split_issue", parts, by: "alice" },
      { kind: "close_issue" },
    ]);
  });

  it("is refused with the reason when there is nothing to accept", () => {
    expect(rejected(transition(escalatedAt([{ type: "phase", phase: "failed" }]), accept))).toBe(
      "no triage proposal waits to be accepted",
    );
    expect(rejected(transition(at("queued"), accept))).toMatch(/does not apply|no triage proposal/);
  });

  it("after a cap abandoned the issue for a human, a retry is still accepted; an abandon is not", () => {
    const limits = { maxCiFixes: 3, maxCriticIterations: 1, maxUpdates: 3, maxHumanRounds: 5 };
    const capped = accepted(
      transition(
        at("awaiting_review"),
        { type: "review", verdict: "REQUEST_CHANGES", summary: "no" },
        limits,
      ),
    ).next;
    const retry = through(
      [{ type: "triage_proposal", proposal: proposalOf({ kind: "retry", hint: "h" }) }],
      capped,
    );
    expect(accepted(transition(retry, accept)).next.state).toBe("queued");
    const abandon = through([{ type: "triage_proposal", proposal: proposalOf({ kind: "abandon" }) }], capped);
    expect(rejected(transition(abandon, accept))).toBe("the issue is abandoned already");
  });
});

describe("a forge that did not answer", () => {
  it("is no answer at all, a timeout, too many requests or a 5xx; any other answer is the forge speaking", () => {
    expect(forgeUnreachable({ message: "fetch failed" })).toBe(true);
    for (const status of [408, 429, 500, 502, 503, 504])
      expect(forgeUnreachable({ status, message: "" })).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 422])
      expect(forgeUnreachable({ status, message: "" })).toBe(false);
    expect(forgeUnreachable({ message: "CI still runs", waiting: true })).toBe(false);
  });
});

describe("every escalation asks for its triage", () => {
  it("numbered as the escalation it answers; an automatic retry asks for none", () => {
    const failed: LifecycleEvent = { type: "phase", phase: "failed", reason: "x", sessionId: "sess-1" };
    const first = accepted(transition(at("running"), failed));
    expect(first.effects.at(-1)).toEqual({ kind: "request_triage", escalation: 1 });
    const resumed = accepted(transition(first.next, { type: "retry", by: "alice" })).next;
    const again = through([{ type: "dispatched", jobId: "job-2", runnerId: "runner-1" }], resumed);
    expect(accepted(transition(again, failed)).effects.at(-1)).toEqual({
      kind: "request_triage",
      escalation: 2,
    });
    const retried = accepted(transition(at("running"), LOST));
    expect(retried.effects.some((e) => e.kind === "request_triage")).toBe(false);
    // A reminder is no new escalation.
    const reminded = accepted(transition(at("escalated"), { type: "timeout", timer: "renotify" }));
    expect(reminded.effects.some((e) => e.kind === "request_triage")).toBe(false);
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIMITS,
  EVENT_TYPES,
  type EventType,
  edges,
  holdsSlot,
  INITIAL_CONTEXT,
  type IssueContext,
  type LifecycleEvent,
  type Outcome,
  retainsWorktree,
  STATES,
  type State,
  TERMINAL_STATES,
  TIMERS,
  transition,
} from "../../src/domain/lifecycle.ts";
import { lifecycleDoc } from "../../src/domain/lifecycle-diagram.ts";
import { timersFor } from "../../src/domain/timers.ts";
import { HEAD, PATHS, sample } from "../support/lifecycle-samples.ts";

const PR_STATES: readonly State[] = [
  "awaiting_ci",
  "awaiting_review",
  "revising",
  "awaiting_approval",
  "merging",
  "escalated",
  "merged",
  "abandoned",
];

/** A plausible context for an issue sitting in `state`. */
function at(state: State, patch: Partial<IssueContext> = {}): IssueContext {
  const started = state !== "new" && state !== "blocked" && state !== "queued";
  return {
    ...INITIAL_CONTEXT,
    state,
    iteration: started ? 1 : 0,
    sessionId: started ? "sess-1" : null,
    branch: started ? "conveyor/7" : null,
    headSha: started ? HEAD : null,
    prOpened: PR_STATES.includes(state),
    // A held merge waits on its vault item.
    vaultItem: state === "awaiting_approval" ? "v1" : null,
    ...patch,
  };
}

// Where each representative event leads from each state; absent = rejected. A reply is taken everywhere.
const EXPECTED: { [S in State]: Partial<Record<EventType, State>> } = withReplies({
  new: { triage: "queued" },
  blocked: { triage: "queued", dependencies: "queued", abandon: "abandoned", issue_closed: "abandoned" },
  queued: {
    dispatched: "running",
    lease_unconfirmed: "queued",
    timeout: "queued",
    abandon: "abandoned",
    issue_closed: "abandoned",
    budget_exceeded: "escalated",
  },
  running: {
    dispatched: "running",
    lease_unconfirmed: "running",
    phase: "awaiting_ci",
    abandon: "abandoned",
    issue_closed: "abandoned",
    timeout: "escalated",
    budget_exceeded: "escalated",
  },
  awaiting_ci: {
    pr_review: "revising",
    merge_command: "awaiting_ci",
    pr_opened: "awaiting_ci",
    ci: "awaiting_review",
    head_mismatch: "escalated",
    merge_confirmed: "merged",
    pr_closed: "abandoned",
    abandon: "abandoned",
    issue_closed: "awaiting_ci",
    timeout: "escalated",
    budget_exceeded: "escalated",
  },
  awaiting_review: {
    pr_review: "revising",
    merge_command: "awaiting_review",
    pr_opened: "awaiting_review",
    review: "merging",
    branch_updated: "awaiting_ci",
    conflict: "revising",
    review_failed: "escalated",
    head_mismatch: "escalated",
    merge_confirmed: "merged",
    pr_closed: "abandoned",
    abandon: "abandoned",
    issue_closed: "awaiting_review",
    timeout: "escalated",
    budget_exceeded: "escalated",
  },
  revising: {
    // Waits for the session's next round.
    pr_review: "revising",
    merge_command: "revising",
    pr_opened: "revising",
    dispatched: "revising",
    lease_unconfirmed: "revising",
    phase: "awaiting_ci",
    merge_confirmed: "merged",
    pr_closed: "abandoned",
    abandon: "abandoned",
    issue_closed: "revising",
    timeout: "escalated",
    budget_exceeded: "escalated",
  },
  awaiting_approval: {
    pr_review: "revising",
    merge_command: "awaiting_approval",
    pr_opened: "awaiting_approval",
    human_approval: "awaiting_approval",
    vault_requested: "awaiting_approval",
    vault_decision: "merging",
    merge_confirmed: "merged",
    pr_closed: "abandoned",
    abandon: "abandoned",
    issue_closed: "awaiting_approval",
  },
  merging: {
    pr_review: "revising",
    merge_command: "merging",
    merge_held: "awaiting_approval",
    pr_opened: "merging",
    branch_updated: "awaiting_ci",
    conflict: "revising",
    merge_confirmed: "merged",
    merge_failed: "escalated",
    merge_needs_approval: "awaiting_approval",
    pr_closed: "abandoned",
    abandon: "abandoned",
    issue_closed: "merging",
    timeout: "merging",
  },
  escalated: {
    pr_review: "revising",
    merge_command: "escalated",
    pr_opened: "escalated",
    human_reply: "revising",
    merge_confirmed: "merged",
    pr_closed: "abandoned",
    retry: "queued",
    abandon: "abandoned",
    issue_closed: "escalated",
    timeout: "abandoned",
  },
  merged: {},
  abandoned: { retry: "queued" },
  done: {},
});

/**
 * A reply is taken everywhere, and so is a vault item's id the issue no longer waits for (it is withdrawn); a
 * dead-lettered effect escalates every issue not already with a human or done.
 */
function withReplies(table: { [S in State]: Partial<Record<EventType, State>> }) {
  const escalates = (state: State) => state !== "escalated" && !TERMINAL_STATES.includes(state);
  return Object.fromEntries(
    STATES.map((state) => [
      state,
      {
        vault_requested: state,
        ...table[state],
        reply: state,
        ...(escalates(state) && { effect_failed: "escalated" }),
      },
    ]),
  ) as typeof table;
}

const edgeSet = new Set(edges().map((e) => `${e.from}|${e.event}|${e.to}`));

function expectAccepted(outcome: Outcome): Extract<Outcome, { ok: true }> {
  if (!outcome.ok) throw new Error(`rejected: ${outcome.reason}`);
  return outcome;
}

function expectRejected(outcome: Outcome): string {
  if (outcome.ok) throw new Error(`accepted into ${outcome.next.state}`);
  return outcome.reason;
}

describe("every (state, event) pair", () => {
  const pairs = STATES.flatMap((state) => EVENT_TYPES.map((event) => [state, event] as const));

  it.each(pairs)("%s × %s", (state, type) => {
    const outcome = transition(at(state), sample(type, state));
    const expected = EXPECTED[state][type];
    if (expected === undefined) {
      expect(expectRejected(outcome)).toMatch(/\S/);
      return;
    }
    const { next } = expectAccepted(outcome);
    expect(next.state).toBe(expected);
    // The diagram's edges are the rule's declared targets: an edge the table takes must be one it declares.
    expect(edgeSet.has(`${state}|${type}|${next.state}`)).toBe(true);
  });

  it("a rejection names the state's reason", () => {
    expect(expectRejected(transition(at("merged"), { type: "retry", by: "bob" }))).toBe(
      "retry does not apply: the issue is merged",
    );
  });
});

describe("dependency gate", () => {
  it("blocks on open dependencies and labels the issue", () => {
    const { next, effects } = expectAccepted(transition(at("new"), { type: "triage", blockers: ["#3"] }));
    expect(next).toMatchObject({ state: "blocked", blockers: ["#3"] });
    expect(effects).toEqual([{ kind: "labels", add: ["blocked"], remove: [] }]);
  });

  it("queues once the last dependency closes", () => {
    const blocked = at("blocked", { blockers: ["#3", "#4"] });
    const partly = expectAccepted(transition(blocked, { type: "dependencies", blockers: ["#4"] }));
    expect(partly.next).toMatchObject({ state: "blocked", blockers: ["#4"] });
    expect(partly.effects).toEqual([]);
    const free = expectAccepted(transition(partly.next, { type: "dependencies", blockers: [] }));
    expect(free.next.state).toBe("queued");
    expect(free.effects).toEqual([
      { kind: "labels", add: [], remove: ["blocked"] },
      { kind: "enqueue_job", job: "implement" },
    ]);
  });

  it("rejects an update that changes nothing", () => {
    expect(
      expectRejected(
        transition(at("blocked", { blockers: ["#3"] }), { type: "dependencies", blockers: ["#3"] }),
      ),
    ).toBe("no change: still blocked by #3");
    expect(expectRejected(transition(at("queued"), { type: "dependencies", blockers: [] }))).toBe(
      "no change: already queued",
    );
  });

  it("a queued issue that gains a dependency goes back to blocked and its job is cancelled", () => {
    const { next, effects } = expectAccepted(
      transition(at("queued"), { type: "dependencies", blockers: ["#9"] }),
    );
    expect(next.state).toBe("blocked");
    expect(effects).toEqual([{ kind: "cancel_jobs" }, { kind: "labels", add: ["blocked"], remove: [] }]);
  });

  it("a cycle blocks with a comment, once", () => {
    const cycle = ["#1", "#2", "#1"];
    const first = expectAccepted(transition(at("new"), { type: "triage", blockers: ["#2"], cycle }));
    expect(first.next).toMatchObject({ state: "blocked", reason: "dependency cycle: #1 → #2 → #1" });
    expect(first.effects).toContainEqual({
      kind: "comment",
      body: "Conveyor cannot start this issue: dependency cycle: #1 → #2 → #1.",
    });
    expect(expectRejected(transition(first.next, { type: "dependencies", blockers: ["#2"], cycle }))).toMatch(
      /still blocked: dependency cycle/,
    );
  });

  it("a writer's triage keeps its text for the jobs; a regate without one keeps the earlier text", () => {
    const brief = { title: "Fix", body: "the parser", by: "alice" };
    const blocked = expectAccepted(transition(at("new"), { type: "triage", blockers: ["#2"], brief }));
    expect(blocked.next.brief).toEqual(brief);
    const freed = expectAccepted(transition(blocked.next, { type: "dependencies", blockers: [] }));
    expect(freed.next).toMatchObject({ state: "queued", brief });
  });

  it("too many dependencies block with a comment, once, and never queue", () => {
    const first = expectAccepted(transition(at("new"), { type: "triage", blockers: [], tooMany: 31 }));
    const reason = "it declares 31 dependencies and at most 20 are read; trim the list or split the issue";
    expect(first.next).toMatchObject({ state: "blocked", reason, blockers: [] });
    expect(first.effects).toEqual([
      { kind: "labels", add: ["blocked"], remove: [] },
      { kind: "comment", body: `Conveyor cannot start this issue: ${reason}.` },
    ]);
    expect(
      expectRejected(transition(first.next, { type: "dependencies", blockers: [], tooMany: 31 })),
    ).toMatch(/still blocked: it declares 31/);
    const queued = expectAccepted(transition(at("queued"), { type: "triage", blockers: [], tooMany: 25 }));
    expect(queued.next.state).toBe("blocked");
    expect(queued.effects).toContainEqual({ kind: "cancel_jobs" });
  });
});

describe("sessions", () => {
  it("dispatch starts iteration 1 and marks the issue in progress", () => {
    const { next, effects } = expectAccepted(
      transition(at("queued"), { type: "dispatched", jobId: "j", runnerId: "r" }),
    );
    expect(next).toMatchObject({ state: "running", iteration: 1 });
    expect(effects).toEqual([{ kind: "labels", add: ["in_progress"], remove: ["backlog"] }]);
  });

  it("the first awaiting_ci opens the pull request; later ones describe it again, with the session's summary", () => {
    const phase = {
      type: "phase",
      phase: "awaiting_ci",
      headSha: "s1",
      branch: "conveyor/7",
      sessionId: "x",
    } as const;
    const first = expectAccepted(transition(at("running", { prOpened: false }), phase));
    expect(first.next).toMatchObject({ state: "awaiting_ci", headSha: "s1", sessionId: "x", prOpened: true });
    expect(first.effects).toEqual([{ kind: "open_pull_request" }, { kind: "watch_ci" }]);
    expect(first.next.summary).toBeNull();
    const again = expectAccepted(
      transition(at("revising"), { ...phase, headSha: "s2", summary: "Fixed the test." }),
    );
    expect(again.effects).toEqual([{ kind: "describe_pull_request" }, { kind: "watch_ci" }]);
    expect(again.next).toMatchObject({ headSha: "s2", summary: "Fixed the test." });
    // A session that says nothing keeps the last account.
    const silent = expectAccepted(transition(at("revising", { summary: "Fixed the test." }), phase));
    expect(silent.next.summary).toBe("Fixed the test.");
  });

  it("awaiting_review from a session waits for CI like awaiting_ci: the critic never hears it first", () => {
    for (const state of ["running", "revising"] as const) {
      const { next, effects } = expectAccepted(
        transition(at(state, { prOpened: false }), {
          type: "phase",
          phase: "awaiting_review",
          headSha: "s1",
        }),
      );
      expect(next).toMatchObject({ state: "awaiting_ci", headSha: "s1" });
      expect(effects).toEqual([{ kind: "open_pull_request" }, { kind: "watch_ci" }]);
    }
  });

  it("a phase that needs a pushed head is rejected without one", () => {
    expect(
      expectRejected(transition(at("running", { headSha: null }), { type: "phase", phase: "awaiting_ci" })),
    ).toBe("awaiting_ci needs the pushed head sha");
  });

  it.each([
    ["escalate", "stuck on auth", "session escalated: stuck on auth"],
    ["failed", "tests do not build", "session failed: tests do not build"],
    ["done", undefined, "session reported done without a pull request"],
    [
      "dry_exit",
      undefined,
      "the session stopped without saying whether its work is ready (it wrote no PHASE file)",
    ],
  ] as const)("phase %s escalates with a reason", (phase, reason, expected) => {
    const { next, effects } = expectAccepted(
      transition(at("running"), { type: "phase", phase, ...(reason ? { reason } : {}) }),
    );
    expect(next).toMatchObject({ state: "escalated", reason: expected });
    expect(effects).toEqual([
      { kind: "labels", add: ["needs_human"], remove: ["in_progress"] },
      { kind: "notify_human", reason: expected },
      { kind: "request_triage", escalation: 1 },
    ]);
  });

  it.each(["running", "revising"] as const)(
    "an underspecified escalation from %s labels the issue, posts the reason and opens no pull request",
    (state) => {
      const { next, effects } = expectAccepted(
        transition(at(state), {
          type: "phase",
          phase: "escalate",
          reason: "underspecified: which of the two APIs?",
        }),
      );
      const reason = "the session judged the issue underspecified: which of the two APIs?";
      expect(next).toMatchObject({ state: "escalated", reason });
      expect(effects).toEqual([
        { kind: "labels", add: ["needs_human", "underspecified"], remove: ["in_progress"] },
        { kind: "notify_human", reason },
        { kind: "request_triage", escalation: 1 },
      ]);
    },
  );
  describe("a phase names the job run that reports it", () => {
    const phase = (jobId: string, attempt: number) =>
      ({ type: "phase", phase: "awaiting_ci", headSha: "s1", jobId, attempt }) as const;
    const dispatched = (jobId: string, attempt: number) =>
      ({ type: "dispatched", jobId, runnerId: "r", attempt }) as const;

    it("the running job's phase ends the session; another job's or attempt's is stale", () => {
      const running = expectAccepted(transition(at("queued"), dispatched("job-a", 2))).next;
      expect(running.job).toEqual({ id: "job-a", attempt: 2 });
      expect(expectAccepted(transition(running, phase("job-a", 2))).next.state).toBe("awaiting_ci");
      expect(expectRejected(transition(running, phase("job-b", 1)))).toBe(
        "stale: the phase of job job-b attempt 1, but job job-a attempt 2 runs the current session",
      );
      expect(expectRejected(transition(running, phase("job-a", 1)))).toMatch(/^stale: /);
    });

    it("a new continuation rejects the last session's job until its own is dispatched", () => {
      const running = expectAccepted(transition(at("queued"), dispatched("job-a", 1))).next;
      const waiting = expectAccepted(transition(running, phase("job-a", 1))).next;
      const red = { type: "ci", result: "red", headSha: "s1", excerpt: "boom" } as const;
      const revising = expectAccepted(transition(waiting, red)).next;
      expect(revising.state).toBe("revising");
      // The implement job's completion, delivered again late, is not the revise session's.
      expect(expectRejected(transition(revising, phase("job-a", 1)))).toBe(
        "stale: the phase of job job-a attempt 1, but the current session has no job dispatched yet",
      );
      const revise = expectAccepted(transition(revising, dispatched("job-b", 1))).next;
      expect(expectRejected(transition(revise, phase("job-a", 1)))).toMatch(/^stale: /);
      expect(expectAccepted(transition(revise, phase("job-b", 1))).next.state).toBe("awaiting_ci");
    });

    it("a phase that names no job (queued before phases did) is taken as before", () => {
      const running = expectAccepted(transition(at("queued"), dispatched("job-a", 1))).next;
      const legacy = { type: "phase", phase: "awaiting_ci", headSha: "s1" } as const;
      expect(expectAccepted(transition(running, legacy)).next.state).toBe("awaiting_ci");
    });
  });

  it("only running and revising hold a slot", () => {
    expect(STATES.filter(holdsSlot)).toEqual(["running", "revising"]);
  });
});

describe("CI", () => {
  it("green goes to review", () => {
    const { next, effects } = expectAccepted(transition(at("awaiting_ci"), sample("ci", "awaiting_ci")));
    expect(next.state).toBe("awaiting_review");
    expect(effects).toEqual([{ kind: "request_review" }]);
  });

  it("red revises with the excerpt, max_ci_fixes times, then escalates", () => {
    let ctx = at("awaiting_ci");
    for (let fix = 1; fix <= DEFAULT_LIMITS.maxCiFixes; fix++) {
      const red = transition(ctx, {
        type: "ci",
        result: "red",
        headSha: ctx.headSha ?? "",
        excerpt: "1 failed",
      });
      const { next, effects } = expectAccepted(red);
      expect(next).toMatchObject({ state: "revising", ciFixes: fix, iteration: fix + 1 });
      expect(effects).toEqual([{ kind: "enqueue_job", job: "revise", reason: "ci", detail: "1 failed" }]);
      ctx = expectAccepted(
        transition(next, { type: "phase", phase: "awaiting_ci", headSha: `fix-${fix}` }),
      ).next;
    }
    const last = expectAccepted(transition(ctx, { type: "ci", result: "red", headSha: "fix-3" }));
    expect(last.next).toMatchObject({ state: "escalated", iteration: 4, ciFixes: 3 });
    expect(last.next.reason).toBe("CI still red after 3 fix attempts (max_ci_fixes 3)");
  });

  it("honours a project's own cap", () => {
    const red = { type: "ci", result: "red", headSha: HEAD } as const;
    expect(
      expectAccepted(transition(at("awaiting_ci"), red, { ...DEFAULT_LIMITS, maxCiFixes: 0 })).next.state,
    ).toBe("escalated");
  });

  it("ignores a result for an older head", () => {
    expect(expectRejected(transition(at("awaiting_ci"), { type: "ci", result: "red", headSha: "old" }))).toBe(
      `CI result for old is not for the current head ${HEAD}`,
    );
  });
});

describe("critic", () => {
  it("a runner's review (or its failure) of another head than the issue's is stale and refused", () => {
    const review: LifecycleEvent = { type: "review", verdict: "APPROVE", summary: "ok", headSha: "old" };
    expect(expectRejected(transition(at("awaiting_review"), review))).toBe(
      `stale: the review is of old, the issue is at ${HEAD}`,
    );
    const failed: LifecycleEvent = { type: "review_failed", reason: "no review", headSha: "old" };
    expect(expectRejected(transition(at("awaiting_review"), failed))).toMatch(/^stale: /);
    expect(expectAccepted(transition(at("awaiting_review"), { ...review, headSha: HEAD })).next.state).toBe(
      "merging",
    );
    expect(expectAccepted(transition(at("awaiting_review"), { ...failed, headSha: HEAD })).next.state).toBe(
      "escalated",
    );
  });

  it("APPROVE merges; with protected paths it waits for a human first", () => {
    const merge = expectAccepted(transition(at("awaiting_review"), sample("review", "awaiting_review")));
    expect(merge.next.state).toBe("merging");
    expect(merge.effects).toEqual([{ kind: "merge" }]);
    const held = expectAccepted(
      transition(at("awaiting_review"), {
        type: "review",
        verdict: "APPROVE",
        summary: "ok",
        needsHumanApproval: "touches protected paths: .ci/run",
      }),
    );
    expect(held.next).toMatchObject({
      state: "awaiting_approval",
      reason: "touches protected paths: .ci/run",
    });
    // The held merge goes to the vault; the human is asked once the vault names the item.
    expect(held.effects).toContainEqual({
      kind: "vault_request",
      reason: "touches protected paths: .ci/run",
    });
    const requested = expectAccepted(transition(held.next, { type: "vault_requested", itemId: "v4" }));
    expect(requested.next.vaultItem).toBe("v4");
    expect(requested.effects).toEqual([
      {
        kind: "notify_human",
        reason: "approved by the critic; touches protected paths: .ci/run (vault item v4)",
      },
    ]);
    // A human's approval is the vault's to decide: one audit trail, the first decision wins.
    const asked = expectAccepted(transition(requested.next, { type: "human_approval", by: "alice" }));
    expect(asked.next.state).toBe("awaiting_approval");
    expect(asked.effects).toEqual([{ kind: "vault_approve", itemId: "v4", by: "alice" }]);
    const approved = expectAccepted(
      transition(asked.next, { type: "vault_decision", itemId: "v4", decision: "approved", by: "alice" }),
    );
    expect(approved.next).toMatchObject({ state: "merging", approvedHead: HEAD, vaultItem: null });
    expect(approved.effects).toContainEqual({ kind: "merge" });
  });

  it("the vault's rejection or expiry abandons the held merge, saying who and why", () => {
    const held = at("awaiting_approval", { vaultItem: "v4" });
    const rejected = expectAccepted(
      transition(held, {
        type: "vault_decision",
        itemId: "v4",
        decision: "rejected",
        by: "bob",
        reason: "not now",
      }),
    );
    expect(rejected.next).toMatchObject({
      state: "abandoned",
      reason: "the merge was rejected by bob: not now",
    });
    expect(rejected.effects).toContainEqual({
      kind: "comment",
      body: expect.stringMatching(
        /^The merge of this change \(vault item v4\) was rejected by bob: not now\./,
      ),
    });
    expect(rejected.effects.some((e) => e.kind === "merge")).toBe(false);
    const expired = expectAccepted(
      transition(held, { type: "vault_decision", itemId: "v4", decision: "expired", by: "timeout" }),
    );
    expect(expired.next).toMatchObject({
      state: "abandoned",
      reason: "the merge was not approved before its vault item expired",
    });
  });

  it("a decision about another vault item (an earlier head's) moves nothing", () => {
    const held = at("awaiting_approval", { vaultItem: "v4" });
    expect(
      expectRejected(
        transition(held, { type: "vault_decision", itemId: "v3", decision: "approved", by: "alice" }),
      ),
    ).toBe("vault item v3 is not the one the merge waits on (v4)");
    const unnamed = at("awaiting_approval", { vaultItem: null });
    expect(
      expectRejected(
        transition(unnamed, { type: "vault_decision", itemId: "v3", decision: "approved", by: "a" }),
      ),
    ).toBe("vault item v3 is not the one the merge waits on (none yet)");
  });

  it("a human approval is for one head: a moved branch asks for another, a stale one is refused", () => {
    const protectedReview: LifecycleEvent = {
      type: "review",
      verdict: "APPROVE",
      summary: "ok",
      needsHumanApproval: "touches protected paths: ci.sh",
    };
    // Held before the vault named its item: the approval moves the issue itself.
    const held = expectAccepted(transition(at("awaiting_review"), protectedReview)).next;
    const approved = expectAccepted(transition(held, { type: "human_approval", by: "alice", headSha: HEAD }));
    expect(approved.next).toMatchObject({ state: "merging", approvedHead: HEAD });
    // At the merge the base had moved on: the forge merged it in, and the new head is checked and reviewed.
    const updated = expectAccepted(transition(approved.next, { type: "branch_updated", headSha: "c0ffee" }));
    const green = expectAccepted(
      transition(updated.next, { type: "ci", result: "green", headSha: "c0ffee" }),
    );
    const held2 = expectAccepted(transition(green.next, protectedReview));
    expect(held2.next.state).toBe("awaiting_approval");
    const again = expectAccepted(transition(held2.next, { type: "vault_requested", itemId: "v2" }));
    const asked = again.effects.find((e) => e.kind === "notify_human");
    expect(asked).toMatchObject({
      reason: expect.stringContaining(`approval given for ${HEAD.slice(0, 12)}`),
    });
    expect(asked).toMatchObject({ reason: expect.stringContaining("approve the pull request again") });
    // The first approval, delivered again (a webhook retried), does not approve the new head.
    expect(transition(again.next, { type: "human_approval", by: "alice", headSha: HEAD })).toEqual({
      ok: false,
      reason: `the approval is for ${HEAD}, not the current head c0ffee`,
    });
    const approving = expectAccepted(
      transition(again.next, { type: "human_approval", by: "alice", headSha: "c0ffee" }),
    );
    expect(approving.effects).toEqual([{ kind: "vault_approve", itemId: "v2", by: "alice" }]);
    const merging = expectAccepted(
      transition(approving.next, { type: "vault_decision", itemId: "v2", decision: "approved", by: "alice" }),
    );
    expect(merging.next).toMatchObject({ state: "merging", approvedHead: "c0ffee" });
    // The operator's approval (the dashboard) names no commit: it is for the head the issue is at.
    expect(transition(again.next, { type: "human_approval", by: "admin" }).ok).toBe(true);
  });

  it("a critic that gives no valid report escalates: never read as APPROVE", () => {
    const { next, effects } = expectAccepted(
      transition(at("awaiting_review"), { type: "review_failed", reason: "report.verdict: invalid option" }),
    );
    expect(next).toMatchObject({
      state: "escalated",
      reason: "the critic failed: report.verdict: invalid option",
    });
    expect(effects.some((e) => e.kind === "merge")).toBe(false);
  });

  it("a duplicated approval merges once", () => {
    const merging = expectAccepted(
      transition(at("awaiting_review"), sample("review", "awaiting_review")),
    ).next;
    expect(expectRejected(transition(merging, sample("review", "merging")))).toBe(
      "already merging: the approval was acted on",
    );
  });

  it("a critic that always requests changes ends abandoned at iteration 3 with needs-human", () => {
    let ctx = at("awaiting_review");
    const changes = { type: "review", verdict: "REQUEST_CHANGES", summary: "rename x" } as const;
    for (;;) {
      const { next, effects } = expectAccepted(transition(ctx, changes));
      if (next.state === "abandoned") {
        expect(next).toMatchObject({ iteration: 3, criticRounds: 3 });
        expect(next.reason).toBe("critic requested changes 3 times (max_critic_iterations 3)");
        expect(effects).toEqual([
          { kind: "labels", add: ["needs_human"], remove: ["in_progress"] },
          { kind: "notify_human", reason: next.reason },
          { kind: "request_triage", escalation: 1 },
        ]);
        // The worktree is kept for the human: no reap.
        expect(effects.some((e) => e.kind === "enqueue_job")).toBe(false);
        return;
      }
      expect(next.state).toBe("revising");
      expect(effects).toEqual([{ kind: "enqueue_job", job: "revise", reason: "review", detail: "rename x" }]);
      const pushed = expectAccepted(
        transition(next, { type: "phase", phase: "awaiting_ci", headSha: "h" }),
      ).next;
      ctx = expectAccepted(transition(pushed, { type: "ci", result: "green", headSha: "h" })).next;
    }
  });

  it("BLOCK abandons at once and keeps the worktree", () => {
    const { next, effects } = expectAccepted(
      transition(at("awaiting_review"), { type: "review", verdict: "BLOCK", summary: "deletes user data" }),
    );
    expect(next).toMatchObject({
      state: "abandoned",
      reason: "critic blocked the change: deletes user data",
    });
    expect(effects.some((e) => e.kind === "enqueue_job")).toBe(false);
  });
});

describe("worktree hygiene", () => {
  const OURS = { number: 42, byConveyor: true };
  const REAP = { kind: "enqueue_job", job: "reap" };
  const retention = { type: "timeout", timer: "retention" } as const;

  it.each(STATES.filter((s) => !TERMINAL_STATES.includes(s) && s !== "new"))(
    "an operator's abandon from %s reaps the worktree at once",
    (state) => {
      const { next, effects } = expectAccepted(transition(at(state), { type: "abandon", by: "alice" }));
      expect(next).toMatchObject({ state: "abandoned", worktreeKept: false });
      expect(effects).toContainEqual(REAP);
      expect(retainsWorktree(next)).toBe(false);
    },
  );

  it.each([
    // Closed with its pull request unmerged (read from the forge first: see "merge").
    ["issue_closed", { type: "issue_closed", unmerged: true }],
    ["pr_closed", { type: "pr_closed", ...OURS }],
  ] as const)("%s reaps the worktree at once", (_name, event) => {
    const { next, effects } = expectAccepted(transition(at("awaiting_ci", { prNumber: 42 }), event));
    expect(next.state).toBe("abandoned");
    expect(effects).toContainEqual(REAP);
  });

  it("a merge reaps the worktree, kept or not", () => {
    const { next, effects } = expectAccepted(
      transition(at("escalated", { prNumber: 42, worktreeKept: true }), { type: "merge_confirmed", ...OURS }),
    );
    expect(next).toMatchObject({ state: "merged", worktreeKept: false });
    expect(effects).toContainEqual(REAP);
  });

  it.each<[string, State, LifecycleEvent]>([
    ["a session's escalation", "running", { type: "phase", phase: "escalate", reason: "which API?" }],
    ["a CI timeout", "awaiting_ci", { type: "timeout", timer: "ci" }],
    ["a failed merge", "merging", { type: "merge_failed", reason: "conflict" }],
    ["a BLOCK verdict", "awaiting_review", { type: "review", verdict: "BLOCK", summary: "unsafe" }],
  ])("%s keeps the worktree for a human and starts its retention", (_name, state, event) => {
    const { next, effects } = expectAccepted(transition(at(state), event));
    expect(next.worktreeKept).toBe(true);
    expect(retainsWorktree(next)).toBe(true);
    expect(effects).not.toContainEqual(REAP);
  });

  it("an unanswered escalation is abandoned with its worktree still kept until the retention ends", () => {
    const escalated = at("escalated", { worktreeKept: true });
    const { next, effects } = expectAccepted(transition(escalated, { type: "timeout", timer: "escalation" }));
    expect(next).toMatchObject({ state: "abandoned", worktreeKept: true });
    expect(effects).not.toContainEqual(REAP);
    expect(retainsWorktree(next)).toBe(true);
  });

  it.each(["escalated", "abandoned"] as const)(
    "the end of the retention in %s reaps the worktree and changes nothing else",
    (state) => {
      const kept = at(state, { worktreeKept: true, reason: "waiting" });
      const { next, effects } = expectAccepted(transition(kept, retention));
      expect(next).toEqual({ ...kept, worktreeKept: false });
      expect(effects).toEqual([{ ...REAP, reason: "retention" }]);
      expect(retainsWorktree(next)).toBe(false);
      // Once reaped, a late second timeout finds nothing to do.
      expect(expectRejected(transition(next, retention))).toBe("no worktree is kept for this issue");
    },
  );

  it.each(STATES.filter((s) => s !== "escalated" && s !== "abandoned"))(
    "no retention runs in %s",
    (state) => {
      expect(retainsWorktree(at(state, { worktreeKept: true }))).toBe(false);
      expectRejected(transition(at(state, { worktreeKept: true }), retention));
    },
  );

  it("an abandoned issue runs no timer but the retention", () => {
    expect(expectRejected(transition(at("abandoned"), { type: "timeout", timer: "escalation" }))).toBe(
      "the escalation timer does not run in state abandoned",
    );
  });

  it.each<[string, State, LifecycleEvent]>([
    ["a human's reply", "escalated", { type: "human_reply", author: "alice", text: "use v2" }],
    ["a retry", "escalated", { type: "retry", by: "alice" }],
    ["a retry of an abandoned issue", "abandoned", { type: "retry", by: "alice" }],
  ])("%s gives the kept worktree back to a session: the retention stops", (_name, state, event) => {
    const { next } = expectAccepted(transition(at(state, { worktreeKept: true }), event));
    expect(next.worktreeKept).toBe(false);
    expect(retainsWorktree(next)).toBe(false);
  });
});

describe("staying current with the base", () => {
  const LIMITS = { ...DEFAULT_LIMITS, maxUpdates: 2 };

  it.each(["awaiting_review", "merging"] as const)(
    "in %s, a forge's update of the branch sends the new head through CI (and the critic) again",
    (state) => {
      const { next, effects } = expectAccepted(
        transition(at(state), { type: "branch_updated", headSha: "new1" }, LIMITS),
      );
      expect(next).toMatchObject({ state: "awaiting_ci", headSha: "new1", updates: 1, reason: null });
      expect(effects).toEqual([{ kind: "watch_ci" }]);
      // Its green CI asks the critic again: the approval was bound to the old head.
      const green = expectAccepted(
        transition(next, { type: "ci", result: "green", headSha: "new1" }, LIMITS),
      );
      expect(green.next.state).toBe("awaiting_review");
      expect(green.effects).toEqual([{ kind: "request_review" }]);
    },
  );

  it("an update that names the head already recorded changes nothing", () => {
    expect(expectRejected(transition(at("merging"), { type: "branch_updated", headSha: HEAD }, LIMITS))).toBe(
      `no change: ${HEAD} is already the head`,
    );
  });

  it.each(["awaiting_review", "merging"] as const)(
    "in %s, a conflict resumes the issue's session with an update job naming the files",
    (state) => {
      const { next, effects } = expectAccepted(
        transition(at(state), { type: "conflict", files: ["src/a.ts", "README.md"] }, LIMITS),
      );
      expect(next).toMatchObject({ state: "revising", updates: 1, iteration: 2 });
      expect(effects).toEqual([
        { kind: "labels", add: ["in_progress"], remove: [] },
        { kind: "enqueue_job", job: "update", reason: "conflict", detail: "src/a.ts\nREADME.md" },
      ]);
    },
  );

  it("a conflict the forge names no files of still resumes the session", () => {
    const { effects } = expectAccepted(transition(at("merging"), { type: "conflict", files: [] }, LIMITS));
    expect(effects).toContainEqual({ kind: "enqueue_job", job: "update", reason: "conflict" });
  });

  it("a conflict without a session to resume escalates", () => {
    const { next } = expectAccepted(
      transition(
        at("merging", { sessionId: null, branch: null }),
        { type: "conflict", files: ["a"] },
        LIMITS,
      ),
    );
    expect(next).toMatchObject({
      state: "escalated",
      reason: "the pull request conflicts with its base: `a`",
    });
  });

  it("after maxUpdates updates the next one escalates, naming the conflicting files", () => {
    const spent = at("merging", { updates: 2 });
    const { next, effects } = expectAccepted(
      transition(spent, { type: "conflict", files: ["src/a.ts", "src/b.ts"] }, LIMITS),
    );
    const reason =
      "the pull request conflicts with its base (`src/a.ts`, `src/b.ts`) after 2 updates from the base (max_updates 2)";
    expect(next).toMatchObject({ state: "escalated", reason, updates: 2 });
    expect(effects).toContainEqual({ kind: "notify_human", reason });
    const behind = expectAccepted(transition(spent, { type: "branch_updated", headSha: "new9" }, LIMITS));
    expect(behind.next).toMatchObject({
      state: "escalated",
      reason: "the pull request is still behind its base after 2 updates from the base (max_updates 2)",
    });
  });

  it("the update job's session ends like any: its push goes through CI and the critic", () => {
    const resolving = expectAccepted(
      transition(at("merging"), { type: "conflict", files: ["a"] }, LIMITS),
    ).next;
    const pushed = expectAccepted(
      transition(resolving, { type: "phase", phase: "awaiting_ci", headSha: "merged1" }, LIMITS),
    );
    expect(pushed.next).toMatchObject({ state: "awaiting_ci", headSha: "merged1", updates: 1 });
    expect(pushed.effects).toContainEqual({ kind: "watch_ci" });
  });
});

const OURS = { number: 42, byConveyor: true };
const FORK = { number: 43, byConveyor: false };

describe("pull request number", () => {
  it("is recorded once, only after a pull request was asked for", () => {
    const { next, effects } = expectAccepted(transition(at("awaiting_ci"), { type: "pr_opened", ...OURS }));
    expect(next).toMatchObject({ state: "awaiting_ci", prNumber: 42 });
    expect(effects).toEqual([]);
    expect(expectRejected(transition(next, { type: "pr_opened", ...OURS }))).toBe(
      "no change: pull request #42 is already recorded",
    );
    expect(
      expectRejected(transition(at("escalated", { prOpened: false }), { type: "pr_opened", ...OURS })),
    ).toBe("no pull request was asked for");
  });

  it("before one is recorded, only Conveyor's own pull request is taken", () => {
    expect(expectRejected(transition(at("awaiting_review"), { type: "pr_opened", ...FORK }))).toBe(
      "pull request #43 was not opened by Conveyor from its branch",
    );
  });

  it("once recorded, no other pull request re-points it, Conveyor's or not", () => {
    const recorded = at("awaiting_review", { prNumber: 42 });
    for (const other of [FORK, { number: 44, byConveyor: true }]) {
      expect(expectRejected(transition(recorded, { type: "pr_opened", ...other }))).toBe(
        `pull request #${other.number} is not the issue's pull request (#42)`,
      );
    }
  });

  it("another pull request closed or merged leaves the issue where it is", () => {
    for (const state of PR_STATES.filter((s) => s !== "merged" && s !== "abandoned")) {
      for (const ctx of [at(state, { prNumber: 42 }), at(state)]) {
        for (const type of ["pr_closed", "merge_confirmed"] as const) {
          expect(expectRejected(transition(ctx, { type, ...FORK }))).toMatch(/^pull request #43 /);
        }
      }
      // The issue's own pull request, by its number, whoever's it looks like now.
      const own = at(state, { prNumber: 43 });
      expect(expectAccepted(transition(own, { type: "pr_closed", ...FORK })).next.state).toBe("abandoned");
      expect(expectAccepted(transition(own, { type: "merge_confirmed", ...FORK })).next.state).toBe("merged");
    }
  });

  it("a merge confirmed before the number arrived records it", () => {
    const { next } = expectAccepted(transition(at("merging"), { type: "merge_confirmed", ...OURS }));
    expect(next).toMatchObject({ state: "merged", prNumber: 42 });
  });
});

describe("merge", () => {
  it("a confirmed merge closes the issue, clears labels, reaps, deletes the branch and wakes dependents", () => {
    const { next, effects } = expectAccepted(
      transition(at("merging"), { type: "merge_confirmed", sha: "m1", ...OURS }),
    );
    expect(next).toMatchObject({ state: "merged", headSha: "m1" });
    expect(effects).toEqual([
      { kind: "cancel_jobs" },
      { kind: "close_issue" },
      { kind: "labels", add: [], remove: ["in_progress", "needs_human", "backlog", "blocked"] },
      { kind: "enqueue_job", job: "reap" },
      { kind: "delete_branch" },
      { kind: "notify_dependents" },
    ]);
  });

  it("a merge or close by a human needs a pull request to exist", () => {
    const noPr = at("running", { prOpened: false });
    expect(expectRejected(transition(noPr, { type: "merge_confirmed", ...OURS }))).toBe(
      "no pull request is open for this issue",
    );
    expect(expectRejected(transition(noPr, { type: "pr_closed", ...OURS }))).toBe(
      "no pull request is open for this issue",
    );
    const { next } = expectAccepted(
      transition(at("running", { prOpened: true }), { type: "pr_closed", ...OURS }),
    );
    expect(next).toMatchObject({ state: "abandoned", reason: "pull request closed without merging" });
  });

  // A human merging the pull request by hand closes the issue ("Closes #n") as Conveyor's own merge does.
  it.each(PR_STATES.filter((s) => !TERMINAL_STATES.includes(s)))(
    "the issue closed in %s waits for the pull request's merged state",
    (state) => {
      const { next, effects } = expectAccepted(transition(at(state), { type: "issue_closed" }));
      expect(next).toEqual(at(state));
      expect(effects).toEqual([{ kind: "check_merged" }]);
      const merged = expectAccepted(transition(next, { type: "merge_confirmed", ...OURS }));
      expect(merged.next.state).toBe("merged");
      const unmerged = expectAccepted(transition(next, { type: "issue_closed", unmerged: true }));
      expect(unmerged.next).toMatchObject({ state: "abandoned", reason: "issue closed on the forge" });
      expect(unmerged.effects[0]).toEqual({ kind: "cancel_jobs" });
    },
  );

  it("the issue closed before any pull request was asked for is abandoned at once", () => {
    const { next } = expectAccepted(transition(at("running", { prOpened: false }), { type: "issue_closed" }));
    expect(next.state).toBe("abandoned");
  });

  it("a pull request closed unmerged is let go: a retry opens a new one", () => {
    const closed = expectAccepted(
      transition(at("awaiting_review", { prNumber: 42 }), { type: "pr_closed", ...OURS }),
    );
    expect(closed.next).toMatchObject({ state: "abandoned", prOpened: false, prNumber: null });
    const retried = expectAccepted(transition(closed.next, { type: "retry", by: "alice" }));
    const dispatched = expectAccepted(
      transition(retried.next, { type: "dispatched", jobId: "job-9", runnerId: "r" }),
    );
    const pushed = expectAccepted(
      transition(dispatched.next, {
        type: "phase",
        phase: "awaiting_ci",
        headSha: "fed9876",
        jobId: "job-9",
      }),
    );
    expect(pushed.effects[0]).toEqual({ kind: "open_pull_request" });
    // The closed one no longer speaks for the issue.
    const late = transition(pushed.next, { type: "pr_opened", number: 43, byConveyor: true });
    expect(expectAccepted(late).next.prNumber).toBe(43);
  });

  it("a failed merge escalates", () => {
    expect(expectAccepted(transition(at("merging"), sample("merge_failed", "merging"))).next.reason).toBe(
      "merge failed: conflict",
    );
  });

  it("a merge the forge refused for want of approvals waits for a human in the vault, as a held merge does", () => {
    const reason = "branch protection on main requires 1 approving review (0 given)";
    const { next, effects } = expectAccepted(
      transition(at("merging"), { type: "merge_needs_approval", reason }),
    );
    expect(next).toMatchObject({ state: "awaiting_approval", reason, vaultItem: null });
    expect(effects).toEqual([
      { kind: "labels", add: ["needs_human"], remove: [] },
      { kind: "vault_request", reason },
    ]);
  });
});

describe("humans and operators", () => {
  it("a reply resumes the same session", () => {
    const { next, effects } = expectAccepted(transition(at("escalated"), sample("human_reply", "escalated")));
    expect(next).toMatchObject({ state: "revising", iteration: 2, sessionId: "sess-1" });
    expect(effects).toEqual([
      { kind: "labels", add: ["in_progress"], remove: ["needs_human"] },
      { kind: "enqueue_job", job: "resume", reason: "human", detail: "alice: use the v2 endpoint" },
    ]);
  });

  it("a reply with no session to resume is refused", () => {
    expect(
      expectRejected(
        transition(at("escalated", { sessionId: null, branch: null }), sample("human_reply", "escalated")),
      ),
    ).toBe("no session to resume: use retry");
  });

  it("retry resets the round counters, keeps iteration and the branch, and re-gates on dependencies", () => {
    const escalated = at("escalated", { ciFixes: 3, criticRounds: 2, iteration: 4 });
    const { next, effects } = expectAccepted(transition(escalated, { type: "retry", by: "op" }));
    expect(next).toMatchObject({
      state: "queued",
      ciFixes: 0,
      criticRounds: 0,
      iteration: 4,
      sessionId: null,
      branch: "conveyor/7",
    });
    expect(effects).toEqual([
      { kind: "labels", add: [], remove: ["needs_human"] },
      { kind: "enqueue_job", job: "implement" },
    ]);
    const gated = expectAccepted(
      transition(at("abandoned", { blockers: ["#2"] }), { type: "retry", by: "op" }),
    );
    expect(gated.next.state).toBe("blocked");
  });

  it("a reply is posted on its thread in every state and changes nothing else", () => {
    for (const state of STATES) {
      const ctx = at(state);
      const { next, effects } = expectAccepted(transition(ctx, { type: "reply", thread: 12, text: "no" }));
      expect(next).toEqual(ctx);
      expect(effects).toEqual([{ kind: "comment", body: "no", thread: 12 }]);
    }
  });

  it("abandon cancels jobs from every live state", () => {
    for (const state of STATES) {
      const outcome = transition(at(state), { type: "abandon", by: "op" });
      if (state === "new" || TERMINAL_STATES.includes(state)) {
        expect(outcome.ok).toBe(false);
        continue;
      }
      const { next, effects } = expectAccepted(outcome);
      expect(next).toMatchObject({ state: "abandoned", reason: "abandoned by op" });
      expect(effects[0]).toEqual({ kind: "cancel_jobs" });
    }
  });
});

describe("head checks", () => {
  it.each(["awaiting_ci", "awaiting_review"] as const)(
    "a forge branch elsewhere than the claimed head escalates from %s",
    (state) => {
      const moved = {
        type: "head_mismatch",
        branch: "conveyor/7",
        claimed: HEAD,
        actual: "fff0000",
      } as const;
      const { next, effects } = expectAccepted(transition(at(state), moved));
      expect(next).toMatchObject({
        state: "escalated",
        reason: `conveyor/7 is at fff0000 on the forge, not at the reported head ${HEAD}`,
      });
      expect(effects).toContainEqual({ kind: "notify_human", reason: next.reason });
      const gone = expectAccepted(transition(at(state), { ...moved, actual: null }));
      expect(gone.next.reason).toBe(
        `conveyor/7 does not exist on the forge, not at the reported head ${HEAD}`,
      );
    },
  );

  it("a mismatch about an older head is rejected: the issue has moved on", () => {
    const stale = { type: "head_mismatch", branch: "conveyor/7", claimed: "0ld", actual: HEAD } as const;
    expect(expectRejected(transition(at("awaiting_ci"), stale))).toBe(`0ld is not the current head ${HEAD}`);
  });

  // The throughput bench found it: reconciliation read an issue as awaiting CI from D1 (which lags) while the
  // issue's own review effect was updating its branch from the base, and the issue escalated.
  it("a mismatch read with CI's verdict counts while the issue waits for CI, not once it waits for the critic", () => {
    const seen = {
      type: "head_mismatch",
      branch: "conveyor/7",
      claimed: HEAD,
      actual: "fff0000",
      seenBy: "ci",
    } as const;
    expect(expectAccepted(transition(at("awaiting_ci"), seen)).next.state).toBe("escalated");
    expect(expectRejected(transition(at("awaiting_review"), seen))).toBe(
      "read with CI's verdict, but the issue no longer waits for CI: its own gates check the head",
    );
  });
});

describe("waiting for a runner", () => {
  const stalled = { type: "lease_unconfirmed", jobId: "job-1", count: 3, retryInMs: 31_000 } as const;

  it("leases nobody confirms: the issue says why and keeps its place; at the bound it escalates", () => {
    const { next, effects } = expectAccepted(transition(at("queued"), stalled));
    const reason =
      "no runner confirmed taking job job-1 3 times in a row; it is offered again in 31 s, then with backoff";
    expect(next).toMatchObject({ state: "queued", reason });
    expect(effects).toEqual([
      { kind: "comment", body: `Conveyor is still waiting for a runner: ${reason}.` },
    ]);
    const gaveUp = expectAccepted(transition(at("queued"), { ...stalled, count: 10, gaveUp: true }));
    expect(gaveUp.next).toMatchObject({
      state: "escalated",
      reason:
        "no runner confirmed taking job job-1 10 times in a row (jobs.maxUnconfirmed): check the runners' logs, then retry",
    });
    expect(gaveUp.effects[0]).toEqual({ kind: "cancel_jobs" });
  });

  it("a continuation's job is the one it names; another job's is stale", () => {
    const waiting = at("revising", { job: { id: "job-2", attempt: 0 } });
    expect(transition(waiting, { ...stalled, jobId: "job-2" }).ok).toBe(true);
    const dispatched = at("revising", { job: { id: "job-3", attempt: 1 } });
    expect(expectRejected(transition(dispatched, stalled))).toBe(
      "stale: job job-1 is not the issue's current job (job-3)",
    );
  });

  it("the dispatch timer says so on the issue, in the queue and before a continuation starts; dispatch clears it", () => {
    for (const state of ["queued", "revising"] as const) {
      const { next, effects } = expectAccepted(transition(at(state), { type: "timeout", timer: "dispatch" }));
      expect(next.state).toBe(state);
      expect(next.reason).toMatch(/^no runner has started its job within timeouts\.dispatch/);
      expect(effects).toEqual([
        { kind: "comment", body: `Conveyor is still waiting for a runner: ${next.reason}.` },
      ]);
      const started = transition(next, { type: "dispatched", jobId: "job-9", runnerId: "r" });
      expect(expectAccepted(started).next.reason).toBeNull();
    }
  });
});

describe("timeouts", () => {
  it("each waiting state has its own timer", () => {
    expect(STATES.map((s) => [s, timersFor(s)]).filter(([, t]) => (t ?? []).length > 0)).toEqual([
      ["queued", ["dispatch"]],
      ["running", ["session", "dispatch"]],
      ["awaiting_ci", ["ci"]],
      ["awaiting_review", ["review"]],
      ["revising", ["session", "dispatch"]],
      ["merging", ["merge"]],
      ["escalated", ["escalation", "renotify"]],
    ]);
  });

  it.each(
    STATES.flatMap((state) =>
      TIMERS.filter((t) => !timersFor(state).includes(t)).map((timer) => [state, timer] as const),
    ),
  )("in %s the %s timer is rejected", (state, timer) => {
    expect(transition(at(state), { type: "timeout", timer }).ok).toBe(false);
  });

  it("an unanswered escalation is abandoned after its window, saying so on the issue", () => {
    const ctx = at("escalated", { reason: "CI did not report in time" });
    const { next, effects } = expectAccepted(transition(ctx, { type: "timeout", timer: "escalation" }));
    expect(next).toMatchObject({
      state: "abandoned",
      reason: "no human answered within the escalation window",
    });
    const comment = effects.find((e) => e.kind === "comment");
    expect(comment).toMatchObject({ body: expect.stringContaining("CI did not report in time") });
    expect(comment).toMatchObject({ body: expect.stringContaining("abandons") });
  });

  it("an escalation reminds its humans, staying escalated", () => {
    const ctx = at("escalated", { reason: "CI did not report in time" });
    const { next, effects } = expectAccepted(transition(ctx, { type: "timeout", timer: "renotify" }));
    expect(next).toEqual(ctx);
    expect(effects).toEqual([{ kind: "notify_human", reason: "CI did not report in time", reminder: true }]);
  });

  it("an overdue merge asks the forge, in its own effect", () => {
    const { next, effects } = expectAccepted(transition(at("merging"), { type: "timeout", timer: "merge" }));
    expect(next.state).toBe("merging");
    expect(effects).toEqual([{ kind: "check_merge" }]);
  });
});

describe("a dead-lettered effect", () => {
  const failed = { type: "effect_failed", effect: "labels", error: "returned 403: forbidden" } as const;

  it("escalates with the refusal as its reason", () => {
    const { next, effects } = expectAccepted(transition(at("awaiting_ci"), failed));
    expect(next).toMatchObject({
      state: "escalated",
      reason: "Conveyor gave up on an action (labels): returned 403: forbidden",
    });
    expect(effects).toContainEqual({ kind: "notify_human", reason: next.reason });
  });

  it("stops the session of an issue at work", () => {
    expect(expectAccepted(transition(at("running"), failed)).effects[0]).toEqual({ kind: "cancel_jobs" });
  });

  it.each(["escalated", "merged", "abandoned"] as const)("is recorded, not acted on, in %s", (state) => {
    expect(expectRejected(transition(at(state), failed))).toBe(
      "labels failed for good: returned 403: forbidden",
    );
  });
});

describe("test paths", () => {
  it.each(STATES)("the shared path reaches %s", (state) => {
    const ctx = PATHS[state].reduce((c, e) => expectAccepted(transition(c, e)).next, INITIAL_CONTEXT);
    expect(ctx.state).toBe(state);
  });
});

describe("docs/lifecycle.md", () => {
  it("is generated from the table (run `npm run docs:lifecycle`)", () => {
    const onDisk = readFileSync(new URL("../../docs/lifecycle.md", import.meta.url), "utf8");
    expect(onDisk).toBe(lifecycleDoc());
  });
});

/** Representative lifecycle events and the event paths that lead to each state, shared by the table tests. */
import type { Proposal } from "../../src/domain/escalation.ts";
import type { EventType, LifecycleEvent, State } from "../../src/domain/lifecycle.ts";
import { timersFor } from "../../src/domain/timers.ts";

export const HEAD = "abc1234";

/** One representative event per type; the timer is the state's own where it has one. */
export function sample(type: EventType, state: State): LifecycleEvent {
  switch (type) {
    case "triage":
    case "dependencies":
      return { type, blockers: [] };
    case "dispatched":
      return { type, jobId: "job-1", runnerId: "runner-1" };
    case "lease_unconfirmed":
      return { type, jobId: "job-1", count: 3, retryInMs: 30_000 };
    case "phase":
      return { type, phase: "awaiting_ci", headSha: HEAD, branch: "conveyor/7", sessionId: "sess-1" };
    case "ci":
      return { type, result: "green", headSha: HEAD };
    case "head_mismatch":
      return { type, branch: "conveyor/7", claimed: HEAD, actual: "fff0000" };
    case "review":
      return { type, verdict: "APPROVE", summary: "looks right" };
    case "review_failed":
      return { type, reason: "no report" };
    case "branch_updated":
      return { type, headSha: "bbb7777" };
    case "conflict":
      return { type, files: ["src/a.txt"] };
    case "pr_opened":
      return { type, number: 42, byConveyor: true };
    case "merge_confirmed":
      return { type, sha: "def4567", number: 42, byConveyor: true };
    case "merge_failed":
      return { type, reason: "conflict" };
    case "merge_needs_approval":
      return { type, reason: "branch protection on main requires 1 approving review (0 given)" };
    case "pr_closed":
      return { type, number: 42, byConveyor: true };
    case "issue_closed":
      return { type };
    case "human_reply":
      return { type, author: "alice", text: "use the v2 endpoint" };
    case "pr_review":
      return {
        type,
        by: "alice",
        verdict: "changes_requested",
        text: "alice requested changes on the pull request:\n\nHandle empty input.",
        writer: true,
        round: true,
        lines: 0,
      };
    case "merge_command":
      return { type, by: "alice", overrides: [11] };
    case "merge_held":
      return { type, holds: [{ by: "bob", reviewId: 11 }] };
    case "vault_requested":
      return { type, itemId: "v2" };
    case "vault_decision":
      return { type, itemId: "v1", decision: "approved", by: "alice" };
    case "human_approval":
    case "abandon":
    case "retry":
      return { type, by: "alice" };
    case "timeout":
      return { type, timer: timersFor(state)[0] ?? "session" };
    case "budget_exceeded":
      return { type, reason: "USD 5.00 of 5.00" };
    case "reply":
      return { type, thread: 7, text: "@bob only users with write access can command Conveyor." };
    case "effect_failed":
      return {
        type,
        effect: "labels",
        error: "forgejo: POST /repos/o/r/issues/7/labels returned 403: forbidden",
      };
    case "forge_recovered":
      return { type, answered: true };
    case "triage_proposal":
      return { type, proposal: PROPOSAL };
    case "accept":
      return { type, by: "alice" };
  }
}

/** A triage agent's answer to an issue's first escalation. */
export const PROPOSAL: Proposal = {
  escalation: 1,
  runId: "run_t1",
  agent: "triage",
  diagnosis: "The session could not find the parser's entry point.",
  step: { kind: "retry", hint: "The parser lives in src/parse.ts; start there." },
};

const started: LifecycleEvent[] = [
  { type: "triage", blockers: [] },
  { type: "dispatched", jobId: "job-1", runnerId: "runner-1" },
];
const pushed: LifecycleEvent[] = [
  ...started,
  { type: "phase", phase: "awaiting_ci", headSha: HEAD, branch: "conveyor/7", sessionId: "sess-1" },
];
const reviewing: LifecycleEvent[] = [...pushed, { type: "ci", result: "green", headSha: HEAD }];

/** Events that take a new issue to each state. */
export const PATHS: { [S in State]: LifecycleEvent[] } = {
  new: [],
  blocked: [{ type: "triage", blockers: ["#1"] }],
  queued: [{ type: "triage", blockers: [] }],
  running: started,
  awaiting_ci: pushed,
  awaiting_review: reviewing,
  // A continuation at work: its job dispatched (its session's timer runs from then).
  revising: [
    ...pushed,
    { type: "ci", result: "red", headSha: HEAD },
    { type: "dispatched", jobId: "job-2", runnerId: "runner-1", attempt: 1 },
  ],
  awaiting_approval: [
    ...reviewing,
    {
      type: "review",
      verdict: "APPROVE",
      summary: "ok",
      needsHumanApproval: "touches protected paths: .ci/run",
    },
  ],
  merging: [...reviewing, { type: "review", verdict: "APPROVE", summary: "ok" }],
  escalated: [...started, { type: "phase", phase: "escalate", reason: "stuck" }],
  merged: [
    ...reviewing,
    { type: "review", verdict: "APPROVE", summary: "ok" },
    { type: "merge_confirmed", number: 42, byConveyor: true },
  ],
  abandoned: [
    { type: "triage", blockers: [] },
    { type: "abandon", by: "op" },
  ],
  // Only an action issue ends done: its session finished its formula.
  done: [
    { type: "triage", blockers: [], action: { formula: "rotate-token" } },
    { type: "dispatched", jobId: "job-1", runnerId: "runner-1" },
    { type: "phase", phase: "done", sessionId: "sess-1", summary: "rotated" },
  ],
};

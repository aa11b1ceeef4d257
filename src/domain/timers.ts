/**
 * Which timers an edge of the lifecycle arms. Every waiting state has a way out in bounded time: entering a
 * state arms its timers afresh; an edge that stays in the state keeps the running ones (a redispatch or a
 * linked pull request does not extend a deadline), and a timer that fired without moving the state (the
 * escalation's reminder) is armed again for its next round, as is the CI timer for a re-run of CI. The
 * session's wall-clock limit counts from when its job is dispatched: a continuation waiting for its job (a
 * paused daily budget) has not started, and a redispatch (a lost lease, another runner) does not restart it.
 * Until then the `dispatch` timer runs: an issue whose job no runner starts says so, every period, instead of
 * waiting unseen.
 */
import type { IssueKind, LifecycleEvent, State, TimerKind } from "./lifecycle.ts";

export type Timeouts = { [K in TimerKind]: number };

export type Timer = { kind: TimerKind; dueAt: number; armedSeq: number };

/**
 * The timers that run while an issue is in a state. An action waiting for a human's reply has one idle
 * timer instead of the escalation's: its session is let go after `idle` (4 h), with no reminders.
 */
export function timersFor(state: State, kind: IssueKind = "code"): TimerKind[] {
  if (kind === "action" && state === "escalated") return ["idle"];
  switch (state) {
    // The dispatch wait until the job starts, then the session's wall clock.
    case "queued":
      return ["dispatch"];
    case "running":
    case "revising":
      return ["session", "dispatch"];
    case "awaiting_ci":
      return ["ci"];
    case "awaiting_review":
      return ["review"];
    // A held merge waits on its vault item, whose expiry (the vault's, 48 h by default) is its way out.
    case "merging":
      return ["merge"];
    case "escalated":
      return ["escalation", "renotify"];
    default:
      return [];
  }
}

export type Edge = {
  from: State;
  to: State;
  event: LifecycleEvent;
  seq: number;
  now: number;
  /** The issue's worktree is kept for a human after the edge (`retainsWorktree`). */
  keepsWorktree?: boolean;
  /** The issue's kind after the edge; absent: code. */
  kind?: IssueKind;
};

/**
 * The timers after an applied edge, given those still running before it. The retention of a kept worktree
 * runs beside the state's timers from when it started, whatever happens meanwhile, until the worktree is
 * reaped or in use again.
 */
export function armTimers(edge: Edge, running: readonly Timer[], timeouts: Timeouts): Timer[] {
  const own = stateTimers(
    edge,
    running.filter((t) => t.kind !== "retention"),
    timeouts,
  );
  if (!edge.keepsWorktree) return own;
  const retention = running.find((t) => t.kind === "retention");
  return [
    ...own,
    retention ?? { kind: "retention", dueAt: edge.now + timeouts.retention, armedSeq: edge.seq },
  ];
}

function stateTimers(edge: Edge, running: readonly Timer[], timeouts: Timeouts): Timer[] {
  const arm = (kind: TimerKind): Timer => ({ kind, dueAt: edge.now + timeouts[kind], armedSeq: edge.seq });
  const { event } = edge;
  const kinds = timersFor(edge.to, edge.kind);
  const dispatched = event.type === "dispatched";
  // A session's clock runs once its job is dispatched; until then, the wait for a runner.
  const starts = (kind: TimerKind) => (kind === "session" ? dispatched : kind !== "dispatch" || !dispatched);
  // A phase that stays in revising ended one session and queued the next (people's round): its own timers.
  const next = edge.from !== edge.to || (event.type === "phase" && edge.to === "revising");
  if (next) return kinds.filter(starts).map(arm);
  const fired = event.type === "timeout" && kinds.includes(event.timer) ? event.timer : null;
  // A CI result that stays in awaiting_ci re-ran CI: the re-run waits for its result as long as a first run.
  const again = fired ?? (event.type === "ci" && kinds.includes("ci") ? "ci" : null);
  const kept = running.filter((t) => t.kind !== again && !(dispatched && t.kind === "dispatch"));
  if (again) return [...kept, arm(again)];
  const sessionStarts =
    event.type === "dispatched" && kinds.includes("session") && !kept.some((t) => t.kind === "session");
  return sessionStarts ? [...kept, arm("session")] : kept;
}

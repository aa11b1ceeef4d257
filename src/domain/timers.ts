/**
 * Which lifecycle timer runs after a transition, and until when. Pure; the IssueDO stores what it returns.
 */
import { type EventType, type State, type TimerKind, timerFor } from "./lifecycle.ts";

export type ArmedTimer = { kind: TimerKind; dueAt: number; armedSeq: number };

export type TimerStep = {
  from: State;
  to: State;
  /** The event the transition applied. */
  event: EventType;
  /** The timer running before it, if any. */
  current: ArmedTimer | null;
  now: number;
  /** The transition's sequence number: what names the timer's expiry event. */
  seq: number;
  timeouts: { [K in TimerKind]: number };
};

/**
 * The timer after a transition: each state's own, armed when the state is entered. The session's wall-clock
 * limit is the exception: it counts from when the session's job is dispatched (a continuation waiting for a
 * paused daily budget has not started), and a redispatch (a lost lease, another runner) or anything else
 * that happens during the session does not restart it.
 */
export function timerAfter(step: TimerStep): ArmedTimer | null {
  const { from, to, event, current, now, seq, timeouts } = step;
  const kind = timerFor(to);
  if (kind === null) return null;
  const armed = { kind, dueAt: now + timeouts[kind], armedSeq: seq };
  if (kind !== "session") return armed;
  if (from === to && current?.kind === "session") return current;
  return event === "dispatched" ? armed : null;
}

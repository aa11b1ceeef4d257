/**
 * Whether a forge event starts a run of an agent whose `on` names it. Anyone who can open an issue, comment or
 * push to a pull request causes such events, and each run is paid for: a sender starts at most
 * `perSenderPerHour` runs an hour (a writer is not held to it), an agent that says `triggeredBy: writers`
 * runs only for writers, and a new run supersedes the same agent's run on the same issue or pull request that
 * still waits for a runner (one pending run each: the newer event is what matters). Pure: the ProjectDO counts
 * and asks the forge whether the sender may write only when the answer matters.
 */

/** What an event run is about: the agent, the issue or pull request, and who caused the event. */
export type EventOrigin = { agent: string; number: number; sender: string };

export type EventRunFacts = {
  sender: string;
  /** Event runs `sender` started in the last hour. */
  senderRecent: number;
  perSenderPerHour: number;
  /** The agent's definition says `triggeredBy: writers`. */
  writersOnly: boolean;
  /** Whether the sender has write access; `unknown` until asked. */
  writer: boolean | "unknown";
};

export type EventRunDecision =
  | { kind: "start" }
  | { kind: "skip"; reason: string }
  /** Ask the forge whether the sender may write, then decide again. */
  | { kind: "ask" };

export const EVENT_RATE_WINDOW_MS = 60 * 60_000;

export function eventRunDecision(facts: EventRunFacts): EventRunDecision {
  const overRate = facts.senderRecent >= facts.perSenderPerHour;
  if (!facts.writersOnly && !overRate) return { kind: "start" };
  if (facts.writer === "unknown") return { kind: "ask" };
  if (facts.writer) return { kind: "start" };
  if (facts.writersOnly) return { kind: "skip", reason: `${facts.sender} has no write access` };
  return {
    kind: "skip",
    reason: `${facts.sender} started ${facts.senderRecent} event runs in the last hour (eventRuns.perSenderPerHour ${facts.perSenderPerHour})`,
  };
}

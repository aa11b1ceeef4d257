/**
 * Events that arrive before the state that accepts them. Senders send each event once (a webhook, the vault's
 * decision, a job's report), and a rejected event's id is spent: an event that only came early is parked on
 * the issue instead, applied once the issue reaches the state that takes it, and rejected only when no later
 * state can (or after a while). Pure: the IssueDO keeps the parked events (durable-objects/issue/parked.ts).
 */
import type { IssueContext, LifecycleEvent } from "./lifecycle.ts";

const HOUR = 60 * 60_000;

/**
 * At most `max` events wait on one issue (a new one past that rejects the oldest), each at most `ttlMs`: an
 * event nothing accepted by then is rejected, saying so.
 */
export const PARKING = { max: 20, ttlMs: 24 * HOUR } as const;

/**
 * What a state the issue has yet to reach would accept `event` for, when the table rejected it in `ctx`;
 * null when no later state can take it (it is rejected for good).
 */
export function awaitsLaterState(ctx: IssueContext, event: LifecycleEvent): string | null {
  switch (event.type) {
    // The vault decided an item whose id the issue has not heard yet (the request's answer comes through the
    // issue's outbox, the decision through the project's: either can come first).
    case "vault_decision":
      return ctx.state === "awaiting_approval" && ctx.vaultItem === null
        ? `vault item ${event.itemId} to be recorded (vault_requested)`
        : null;
    // CI reported on a head the session has pushed but not reported yet; the issue waits for CI next.
    case "ci":
      return (ctx.state === "running" || ctx.state === "revising") && event.headSha !== ctx.headSha
        ? `the session to report ${event.headSha.slice(0, 12)} (awaiting_ci)`
        : null;
    default:
      return null;
  }
}

/**
 * Whether a runner is there, from what D1 records of it: offline once it said it stopped (`POST
 * /runner/v1/offline`) or once it has been silent longer than a live runner ever is (its claims wait at most
 * `MAX_CLAIM_WAIT_MS`, its heartbeats come more often), within a heartbeat period of its last call; busy
 * while D1 records jobs leased to it; idle otherwise. Pure.
 */
import { MAX_CLAIM_WAIT_MS } from "./contract.ts";

/** Last-seen times are this coarse, so a busy runner does not write to D1 on every call. */
export const SEEN_RESOLUTION_MS = 5_000;

/** Silent this long, a runner is offline: its longest silence, the record's coarseness, and a slow call. */
export const OFFLINE_AFTER_MS = MAX_CLAIM_WAIT_MS + SEEN_RESOLUTION_MS + 5_000;

export type Presence =
  | { status: "busy" | "idle" }
  /** `stopped`: it said so; otherwise it went silent (killed, its host down, cut off). `since`: from when. */
  | { status: "offline"; since: number; stopped: boolean };

export function runnerPresence(
  runner: { lastSeenAt: number; offlineAt: number | null; jobs: readonly unknown[] },
  now: number,
): Presence {
  if (runner.offlineAt !== null) return { status: "offline", since: runner.offlineAt, stopped: true };
  if (now - runner.lastSeenAt > OFFLINE_AFTER_MS)
    return { status: "offline", since: runner.lastSeenAt, stopped: false };
  return { status: runner.jobs.length > 0 ? "busy" : "idle" };
}

import { performance } from "node:perf_hooks";
import { MAX_HEARTBEAT_INTERVAL_MS } from "../src/runner-api/contract.ts";
import type { RunnerApi } from "./api.ts";
import { LeaseLostError } from "./api-errors.ts";
import type { Logger } from "./log.ts";
import { sleep } from "./sleep.ts";

/** A failed heartbeat is retried sooner, but never in a tight loop. */
const MIN_INTERVAL_MS = 100;
/**
 * The lease assumed when an older Worker states none as a duration: the least `jobs.leaseMs` a project may
 * set, so the runner beats often enough and gives up no later than the Worker does.
 */
export const FALLBACK_LEASE_MS = 10_000;

/** This host's monotonic clock: wall-clock steps (NTP, a wrong date) do not move it. */
const monotonic = () => performance.now();

/**
 * Keeps a job's lease. The Worker states each lease as a duration (`leaseMs`, from its answer); the runner
 * counts it on its own monotonic clock from when the heartbeat left (from the claim's arrival for the first),
 * so the deadline it keeps is never later than the Worker's and no clock of another machine is read.
 *
 * The first heartbeat goes at once: it confirms the lease, which the Worker holds only briefly until then.
 * After that, a heartbeat at a third of the lease (at most `MAX_HEARTBEAT_INTERVAL_MS`, the runner's sign of
 * life), so two can fail before it runs out, on the runner's grid (`nextBeatAt`): every lease of the runner
 * beats at the same moments, and their heartbeats go to the Worker in one report (./report-batch.ts). When
 * the local deadline passes without an answer (the Worker is out of reach) the lease counts as lost: `onLost`.
 */
export class LeaseKeeper {
  readonly #api: RunnerApi;
  readonly #jobId: string;
  readonly #leaseToken: string;
  readonly #log: Logger;
  readonly #onCancelled: () => void;
  readonly #onLost: () => void;
  #leaseMs: number;
  /** On the monotonic clock. */
  #deadline: number;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #lost = false;
  /** The point of the runner's grid the next beat is due at; null while retrying. */
  #beatAt: number | null = null;
  /** A heartbeat was answered: the Worker holds the lease at its full length. */
  #confirmed = false;

  constructor(options: {
    api: RunnerApi;
    jobId: string;
    leaseToken: string;
    /** The lease as the claim's answer stated it, counted from now. */
    leaseMs: number;
    log: Logger;
    onCancelled: () => void;
    onLost: () => void;
  }) {
    this.#api = options.api;
    this.#jobId = options.jobId;
    this.#leaseToken = options.leaseToken;
    this.#log = options.log;
    this.#onCancelled = options.onCancelled;
    this.#onLost = options.onLost;
    this.#leaseMs = options.leaseMs;
    this.#deadline = monotonic() + options.leaseMs;
  }

  /** Heartbeats from now on, the first at once (it confirms the lease). */
  start(): void {
    this.#schedule(0);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** The lease is ours as far as this host knows: not fenced, and its local deadline not passed. */
  get held(): boolean {
    return !this.#lost && monotonic() < this.#deadline;
  }

  /**
   * Asks the Worker now whether the lease is still ours (before a push: a runner cut off from the Worker, or
   * whose job went to another runner, must not push). Retries an unanswered heartbeat until the local deadline;
   * false when the lease is fenced or that deadline passed first.
   */
  async confirm(): Promise<boolean> {
    for (;;) {
      if (!this.held) return false;
      const answer = await this.#heartbeat(true);
      if (answer === "held") return true;
      if (answer === "lost") return false;
      await sleep(Math.min(this.#leaseMs / 10, Math.max(0, this.#deadline - monotonic())) + 1);
    }
  }

  #schedule(delay: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#beat(), Math.max(delay === 0 ? 0 : MIN_INTERVAL_MS, delay));
  }

  async #beat(): Promise<void> {
    const sentAt = monotonic();
    // Counted from the grid point this beat was due at (a late timer moves no later beat), else from when it left.
    const from = this.#beatAt ?? sentAt;
    this.#beatAt = null;
    const answer = await this.#heartbeat();
    if (this.#stopped || answer === "lost") return;
    // Never further apart than the Worker counts a runner present for (a long lease would leave it silent).
    const interval = Math.max(MIN_INTERVAL_MS, Math.min(this.#leaseMs / 3, MAX_HEARTBEAT_INTERVAL_MS));
    if (answer === "held") {
      // A slow answer does not stretch the cadence.
      this.#beatAt = nextBeatAt(from, interval);
      this.#schedule(this.#beatAt - monotonic());
      return;
    }
    const left = this.#deadline - monotonic();
    if (left <= 0) {
      this.#log.warn("lease lost: no heartbeat answered before its deadline", { leaseMs: this.#leaseMs });
      this.#lose();
      return;
    }
    this.#schedule(Math.min(interval / 3, left));
  }

  /** One heartbeat: `held` (deadline moved on), `lost` (fenced: `onLost` called) or `unanswered`. */
  async #heartbeat(confirming = false): Promise<"held" | "lost" | "unanswered"> {
    const sentAt = monotonic();
    try {
      // The lease's confirmation, and the check before a push, do not wait for the others' heartbeats.
      const urgent = !this.#confirmed || confirming;
      const { leaseMs, cancelled } = await this.#api.heartbeat(this.#jobId, this.#leaseToken, { urgent });
      this.#confirmed = true;
      if (this.#lost) return "lost";
      this.#leaseMs = leaseMs ?? FALLBACK_LEASE_MS;
      this.#deadline = Math.max(this.#deadline, sentAt + this.#leaseMs);
      this.#log.debug("heartbeat", { leaseMs: this.#leaseMs });
      if (cancelled && !this.#stopped) {
        this.#log.info("the Worker cancelled the job");
        this.#onCancelled();
      }
      return "held";
    } catch (error) {
      if (error instanceof LeaseLostError) {
        if (!this.#stopped) this.#log.warn("lease lost", { error });
        this.#lose();
        return "lost";
      }
      if (!this.#stopped) this.#log.warn("heartbeat failed", { error });
      return "unanswered";
    }
  }

  #lose(): void {
    if (this.#lost) return;
    this.#lost = true;
    const stopped = this.#stopped;
    this.stop();
    if (!stopped) this.#onLost();
  }
}

/**
 * When the heartbeat after one sent (or due) at `sentAt` goes: the next point of the runner's grid (multiples of
 * the interval on the monotonic clock), within (sentAt, sentAt + interval]. Never later than a beat each
 * interval, and every lease with the same interval beats at the same points: a lease's first beat after its
 * confirmation may come early, but it rides the report its runner's other leases send then.
 */
export function nextBeatAt(sentAt: number, interval: number): number {
  // Whole milliseconds: a beat due at a grid point lands exactly on the next one, whatever the interval.
  const step = Math.max(1, Math.floor(interval));
  return (Math.floor(sentAt / step) + 1) * step;
}

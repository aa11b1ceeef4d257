import { LeaseLostError, type RunnerApi } from "./api.ts";
import type { Logger } from "./log.ts";

/** A failed heartbeat is retried sooner, but never in a tight loop. */
const MIN_INTERVAL_MS = 100;

/**
 * Keeps a job's lease: heartbeats at a third of the lease, so two can fail before it runs out. The lease is
 * measured as `leaseExpiresAt` (the Worker's clock) minus when the heartbeat left (this host's): a host clock
 * that is behind only makes heartbeats more frequent, and one up to twice a lease ahead still beats in time.
 */
export class LeaseKeeper {
  readonly #api: RunnerApi;
  readonly #jobId: string;
  readonly #leaseToken: string;
  readonly #log: Logger;
  readonly #onCancelled: () => void;
  readonly #onLost: () => void;
  #interval: number;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: {
    api: RunnerApi;
    jobId: string;
    leaseToken: string;
    leaseExpiresAt: number;
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
    this.#interval = thirdOf(options.leaseExpiresAt, Date.now());
  }

  start(): void {
    this.#schedule(this.#interval);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(delay: number): void {
    if (!this.#stopped) this.#timer = setTimeout(() => void this.#beat(), Math.max(MIN_INTERVAL_MS, delay));
  }

  async #beat(): Promise<void> {
    const sentAt = Date.now();
    try {
      const { leaseExpiresAt, cancelled } = await this.#api.heartbeat(this.#jobId, this.#leaseToken);
      if (this.#stopped) return;
      this.#log.debug("heartbeat", { leaseExpiresAt });
      if (cancelled) {
        this.#log.info("the Worker cancelled the job");
        this.#onCancelled();
      }
      // Counted from when this heartbeat left, so a slow answer does not stretch the cadence.
      this.#interval = thirdOf(leaseExpiresAt, sentAt);
      this.#schedule(sentAt + this.#interval - Date.now());
    } catch (error) {
      if (this.#stopped) return;
      if (error instanceof LeaseLostError) {
        this.#log.warn("lease lost", { error });
        this.stop();
        this.#onLost();
        return;
      }
      this.#log.warn("heartbeat failed", { error });
      this.#schedule(this.#interval / 3);
    }
  }
}

function thirdOf(leaseExpiresAt: number, from: number): number {
  return Math.max(MIN_INTERVAL_MS, (leaseExpiresAt - from) / 3);
}

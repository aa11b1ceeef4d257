import { backoffDelay } from "../src/domain/backoff.ts";
import { RETRY_BACKOFF, UnauthorizedError } from "./api.ts";
import { DiskMeter } from "./disk.ts";
import { measureHost } from "./host.ts";
import { type JobContext, runJob } from "./job.ts";
import { sleep } from "./sleep.ts";

/** The contract's cap on `claim.holding`. */
const MAX_HOLDING = 1_000;
/** Saying it stops must not hold up a stop: an unreachable Worker notices the silence instead. */
const OFFLINE_TIMEOUT_MS = 5_000;

export type RunnerOptions = JobContext & {
  concurrency: number;
  /** Claim jobs of these projects only; all when absent. */
  projects?: string[];
  claimWaitMs: number;
  shutdownGraceMs: number;
  /** Measures the work dir for the claims' and heartbeats' disk report; over the workspace's work dir by default. */
  disk?: DiskMeter;
};

/**
 * The main loop: one claim loop per slot, so up to `concurrency` jobs run at once and a free slot is always
 * waiting on a long poll. `stop()` ends claiming at once, gives running jobs `shutdownGraceMs` to finish and
 * then aborts them (they report `fail`, retryable).
 */
export class Runner {
  readonly #options: RunnerOptions;
  readonly #disk: DiskMeter;
  readonly #claiming = new AbortController();
  readonly #jobs = new AbortController();
  #graceTimer: NodeJS.Timeout | undefined;
  #fatal: unknown;

  constructor(options: RunnerOptions) {
    this.#options = options;
    this.#disk = options.disk ?? new DiskMeter(options.workspace.workDir);
    // Every claim and heartbeat says what this runner measures of its host.
    options.api.health = async () => {
      const disk = await this.#disk.current();
      return { host: measureHost(), ...(disk && { disk }) };
    };
  }

  /** Resolves when every slot has stopped; rejects if the Worker refused the runner's token. */
  async run(): Promise<void> {
    const slots = Array.from({ length: this.#options.concurrency }, (_, slot) => this.#slot(slot));
    await Promise.all(slots);
    clearTimeout(this.#graceTimer);
    if (this.#fatal !== undefined) throw this.#fatal;
    await this.#options.api.offline(OFFLINE_TIMEOUT_MS).catch((error: unknown) => {
      this.#options.log.warn("could not tell the Worker this runner stops", { error });
    });
  }

  /** First call: stop claiming and start the grace period. `now` (or a second call): abort running jobs. */
  stop(now = false): void {
    const { log, shutdownGraceMs } = this.#options;
    if (now || this.#claiming.signal.aborted) {
      log.info("aborting running jobs");
      this.#jobs.abort();
      return;
    }
    log.info("stopping: no new jobs; running jobs get a grace period", { shutdownGraceMs });
    this.#claiming.abort();
    this.#graceTimer = setTimeout(() => this.stop(true), shutdownGraceMs);
  }

  async #slot(slot: number): Promise<void> {
    const { api, holdings, log, claimWaitMs, projects } = this.#options;
    const signal = this.#claiming.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const holding = holdings.list().slice(0, MAX_HOLDING);
        // Disk use, memory and load ride along with every claim (and heartbeat), the runner's sign of life: the
        // runners page shows them and the supervisor checks them.
        const claim = await api.claim(
          { waitMs: claimWaitMs, holding, ...(projects && { projects }) },
          signal,
        );
        failures = 0;
        if (claim) {
          log.info("claimed", {
            slot,
            job: claim.job.id,
            kind: claim.job.kind,
            issue: claim.job.issue.number,
          });
          await runJob(this.#options, claim, this.#jobs.signal);
        }
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof UnauthorizedError) {
          this.#fatal ??= new Error(`the Worker refused the runner token (${error.message})`);
          // No new claims; running jobs get the grace period to finish and report (their reports retry a
          // refusal), rather than throwing their work away.
          if (!signal.aborted) this.stop();
          break;
        }
        failures++;
        const delay = backoffDelay(failures, RETRY_BACKOFF);
        log.warn("claim failed", { slot, error, retryInMs: delay });
        await sleep(delay, signal);
      }
    }
  }
}

import { backoffDelay } from "../src/domain/backoff.ts";
import type { HostReport } from "../src/runner-api/contract.ts";
import { RETRY_BACKOFF, UnauthorizedError } from "./api.ts";
import { Backpressure, DEFAULT_PRESSURE_LIMITS, type PressureLimits } from "./backpressure.ts";
import { DiskMeter, freeSpace } from "./disk.ts";
import { warmMirrors } from "./git/mirror-warmer.ts";
import { measureHost } from "./host.ts";
import { type JobContext, runJob } from "./job.ts";
import { sleep } from "./sleep.ts";

/** The contract's cap on `claim.holding`. */
const MAX_HOLDING = 1_000;
/** Saying it stops must not hold up a stop: an unreachable Worker notices the silence instead. */
const OFFLINE_TIMEOUT_MS = 5_000;
/**
 * How often a runner that holds back looks at its host again, and tells the Worker why it claims nothing:
 * well within the silence after which it would read offline (runner-api/presence.ts).
 */
export const PRESSURE_CHECK_MS = 10_000;

export type RunnerOptions = JobContext & {
  concurrency: number;
  /** Claim jobs of these projects only; all when absent. */
  projects?: string[];
  claimWaitMs: number;
  shutdownGraceMs: number;
  /** Measures the work dir for the claims' and heartbeats' disk report; over the workspace's work dir by default. */
  disk?: DiskMeter;
  /** Past these the runner claims nothing until the host recovers (./backpressure.ts). */
  pressureLimits?: PressureLimits;
  /** The host's memory and load (./host.ts by default), and how often a runner holding back looks again. */
  measureHost?: () => HostReport;
  pressureCheckMs?: number;
  /** How often the private repositories are fetched between claims (git/mirror-warmer.ts). */
  mirrorRefreshMs?: number;
};

/**
 * The main loop: one claim loop per slot, so up to `concurrency` jobs run at once and a free slot is always
 * waiting on a long poll. `stop()` ends claiming at once, gives running jobs `shutdownGraceMs` to finish and
 * then aborts them (they report `fail`, retryable).
 */
export class Runner {
  readonly #options: RunnerOptions;
  readonly #disk: DiskMeter;
  readonly #backpressure: Backpressure;
  readonly #claiming = new AbortController();
  readonly #jobs = new AbortController();
  #graceTimer: NodeJS.Timeout | undefined;
  #fatal: unknown;

  constructor(options: RunnerOptions) {
    this.#options = options;
    this.#disk = options.disk ?? new DiskMeter(options.workspace.workDir);
    const host = options.measureHost ?? (() => measureHost());
    this.#backpressure = new Backpressure(
      options.pressureLimits ?? DEFAULT_PRESSURE_LIMITS,
      async () => ({ ...host(), diskFreeBytes: await freeSpace(options.workspace.workDir) }),
      options.log,
    );
    // Every claim and heartbeat says what this runner measures of its host, and why it holds back if it does.
    options.api.health = async () => {
      const disk = await this.#disk.current();
      const pressure = this.#backpressure.current;
      return { host: host(), ...(disk && { disk }), ...(pressure.length > 0 && { pressure }) };
    };
  }

  /** Resolves when every slot has stopped; rejects if the Worker refused the runner's token. */
  async run(): Promise<void> {
    const { workspace, log, mirrorRefreshMs } = this.#options;
    warmMirrors(workspace, log, this.#claiming.signal, mirrorRefreshMs);
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
        const held = (await this.#backpressure.check()).length > 0;
        // Disk use, memory and load ride along with every claim (and heartbeat), the runner's sign of life: the
        // runners page shows them and the supervisor checks them. Held back, one slot says why (its claim
        // leases nothing) and every slot looks at the host again a while later.
        const claim =
          held && slot > 0
            ? null
            : await api.claim(
                { waitMs: held ? 0 : claimWaitMs, holding, ...(projects && { projects }) },
                signal,
              );
        if (held && !claim) {
          await sleep(this.#options.pressureCheckMs ?? PRESSURE_CHECK_MS, signal);
          continue;
        }
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

import type { BackoffPolicy } from "../src/domain/backoff.ts";
import { MAX_REASON_CHARS } from "../src/domain/phase.ts";
import type { CompleteRequest, RunnerEvent } from "../src/runner-api/contract.ts";
import { LeaseLostError, type RunnerApi, withRetries } from "./api.ts";
import type { LogLevel } from "./log.ts";

const MAX_BATCH = 100;
const MAX_LOG_CHARS = 10_000;
/** Attempts of a report; the job's last word goes on while its lease can be valid. */
export const REPORT_ATTEMPTS = 6;

export type ReportOutcome = Omit<CompleteRequest, "leaseToken">;

/**
 * Everything a job tells the Worker, under its lease token and in order: events are queued and sent in
 * batches by one sender at a time, and `complete`/`fail` go out only after every queued event. Transient
 * failures are retried; the job's last word (`complete`, `fail`) for as long as its lease can still be valid
 * (`leaseHeld`), since giving it up throws the finished session away and has another attempt run it again.
 * Once the lease is lost (fenced) nothing more is sent and `onLost` is called.
 */
export class Reporter {
  readonly #api: RunnerApi;
  readonly #jobId: string;
  readonly #leaseToken: string;
  readonly #redact: (text: string) => string;
  readonly #onLost: () => void;
  /** Where failures of the reporting itself are logged: never back into `log` events. */
  readonly #warn: (message: string, error: unknown) => void;
  readonly #leaseHeld: () => boolean;
  readonly #backoff: BackoffPolicy | undefined;
  readonly #queue: RunnerEvent[] = [];
  #chain: Promise<void> = Promise.resolve();
  #lost = false;
  #finished = false;

  constructor(options: {
    api: RunnerApi;
    jobId: string;
    leaseToken: string;
    /** Applied to the outcome's texts: errors, and the reasons the agent wrote itself. */
    redact: (text: string) => string;
    onLost: () => void;
    warn: (message: string, error: unknown) => void;
    /** Whether the job's lease can still be valid: its last word is retried while it is. */
    leaseHeld?: () => boolean;
    /** The retries' backoff (the API client's by default). */
    backoff?: BackoffPolicy;
  }) {
    this.#api = options.api;
    this.#jobId = options.jobId;
    this.#leaseToken = options.leaseToken;
    this.#redact = options.redact;
    this.#onLost = options.onLost;
    this.#warn = options.warn;
    this.#leaseHeld = options.leaseHeld ?? (() => false);
    this.#backoff = options.backoff;
  }

  get lost(): boolean {
    return this.#lost;
  }

  /** Queues an event; the promise settles once it was sent or given up (it never rejects). */
  event(event: RunnerEvent): Promise<void> {
    if (this.#lost || this.#finished) return Promise.resolve();
    this.#queue.push(event);
    return this.#enqueue(() => this.#flush());
  }

  /** Forwards a log line (redacted by the logger) as a `log` event, without waiting for it. */
  log(level: LogLevel, message: string): void {
    void this.event({ kind: "log", level, message: message.slice(0, MAX_LOG_CHARS) });
  }

  complete(outcome: ReportOutcome): Promise<void> {
    const reason =
      outcome.reason === undefined ? {} : { reason: this.#redact(outcome.reason).slice(0, MAX_REASON_CHARS) };
    const request = { ...outcome, ...reason, leaseToken: this.#leaseToken };
    return this.#finish("complete", () => this.#api.complete(this.#jobId, request));
  }

  fail(error: string, retryable: boolean): Promise<void> {
    const request = {
      leaseToken: this.#leaseToken,
      error: this.#redact(error).slice(0, MAX_LOG_CHARS),
      retryable,
    };
    return this.#finish("fail", () => this.#api.fail(this.#jobId, request));
  }

  /** The job's last word, after every queued event; nothing is queued after it. */
  #finish(what: string, call: () => Promise<void>): Promise<void> {
    this.#finished = true;
    // Events already waiting for the runner's next report go now: the last word waits for them.
    this.#api.sendReportsNow();
    return this.#enqueue(async () => {
      await this.#flush();
      if (!this.#lost) await this.#send(what, call, this.#leaseHeld);
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0 && !this.#lost) {
      const batch = this.#queue.splice(0, MAX_BATCH);
      // Once the job is ending, not with the runner's next report: the last word waits for them.
      const urgent = this.#finished;
      await this.#send("events", () => this.#api.events(this.#jobId, this.#leaseToken, batch, { urgent }));
    }
  }

  async #send(what: string, call: () => Promise<void>, keepTrying?: () => boolean): Promise<void> {
    try {
      await withRetries(call, {
        attempts: REPORT_ATTEMPTS,
        ...(keepTrying && { keepTrying }),
        ...(this.#backoff && { backoff: this.#backoff }),
        // The token worked for the claim: a refusal now (the Worker failing to read its runners, a rotation
        // racing this call) may pass, and giving up would throw the session's finished work away.
        retryUnauthorized: true,
        onRetry: (error) => this.#warn(`${what} failed; retrying`, error),
      });
    } catch (error) {
      if (error instanceof LeaseLostError) {
        this.#lost = true;
        this.#queue.length = 0;
        this.#onLost();
      }
      this.#warn(`${what} not delivered`, error);
    }
  }

  /** Runs `task` after everything queued before it; a failing task does not stop the ones after it. */
  #enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.#chain.then(task).catch((error: unknown) => this.#warn("report failed", error));
    this.#chain = next;
    return next;
  }
}

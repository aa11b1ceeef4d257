import type { z } from "zod";
import { type BackoffPolicy, backoffDelay } from "../src/domain/backoff.ts";
import { errorMessage } from "../src/error-message.ts";
import {
  type BacklogQuery,
  type BacklogResponse,
  backlogResponse,
} from "../src/runner-api/backlog-contract.ts";
import {
  type Claim,
  type CompleteRequest,
  claimResponse,
  type DiskReport,
  type FireResponse,
  fireResponse,
  type HostReport,
  heartbeatResponse,
  type RunnerEvent,
  registerResponse,
  rotateResponse,
  type SandboxKind,
  TOKEN_ROTATE_HEADER,
} from "../src/runner-api/contract.ts";
import {
  type RenewedLease,
  type ReportAnswer,
  type ReportItem,
  reportResponse,
} from "../src/runner-api/report-contract.ts";
import { ApiError, LEASE_LOST, LeaseLostError, NETWORK, UnauthorizedError } from "./api-errors.ts";
import { measureHost } from "./host.ts";
import { FALLBACK_LEASE_MS } from "./lease.ts";
import { ReportBatch } from "./report-batch.ts";
import { sleep } from "./sleep.ts";

export type HealthReport = { disk?: DiskReport; host?: HostReport };

/**
 * The runner API client. Routes (all POST, JSON):
 *
 *   /runner/v1/register                 no auth; registerRequest → registerResponse
 *   /runner/v1/rotate                   no body → rotateResponse
 *   /runner/v1/offline                  no body → 204 (the runner stops)
 *   /runner/v1/claim                    claimRequest → 200 claimResponse | 204 nothing to do
 *   /runner/v1/report                   reportRequest → reportResponse (every job's heartbeat and events)
 *   /runner/v1/jobs/:jobId/fire         fireRequest → fireResponse
 *   /runner/v1/jobs/:jobId/complete     completeRequest → 2xx
 *   /runner/v1/jobs/:jobId/fail         failRequest → 2xx
 *
 * Heartbeats and events are coalesced (./report-batch.ts): one report carries every job's that are due at
 * once, and each job's answer in it settles that job's call, as its own route's would have.
 *
 * A job call answered 403 (leased to another runner), 404 (unknown job) or 409 (not the current lease) means
 * the job is no longer ours (fenced): `LeaseLostError`. An answer asking for the token's rotation calls
 * `onRotationDue`.
 */
export { ApiError, LeaseLostError, NETWORK, UnauthorizedError };

type RegisterResponse = z.infer<typeof registerResponse>;
type RotateResponse = z.infer<typeof rotateResponse>;

const REQUEST_TIMEOUT_MS = 30_000;
/** A long poll may take `waitMs`; the answer gets this long on top. */
const CLAIM_SLACK_MS = 15_000;

export class RunnerApi {
  readonly #base: URL;
  readonly #sandbox: SandboxKind;
  #token: string | undefined;
  /** Called when the Worker asks this runner to rotate its token (see `TokenRotation`). */
  onRotationDue: (() => void) | undefined;
  /**
   * What every claim and heartbeat report of the host (the supervisor's inputs): its memory and load, and the
   * work dir's disk once the `Runner` measures it. Heartbeats carry it too: a runner whose slots are all busy
   * with long sessions claims nothing for hours, and that is when its memory and disk matter.
   */
  health: () => HealthReport | Promise<HealthReport> = () => ({ host: measureHost() });
  readonly #reports: ReportBatch;
  /** The Worker predates `report`: each job's heartbeat and events go on their own routes. */
  #perJob = false;

  /**
   * `sandbox`: what register and every claim report as the runner's sandbox, shown on the Worker's runner
   * list; "none" for a runner started with `--unsafe-no-sandbox`.
   */
  constructor(
    workerUrl: string,
    token?: string,
    options: { sandbox?: SandboxKind; eventsWindowMs?: number } = {},
  ) {
    this.#base = new URL(workerUrl.endsWith("/") ? workerUrl : `${workerUrl}/`);
    this.#token = token;
    this.#sandbox = options.sandbox ?? "bubblewrap";
    this.#reports = new ReportBatch((jobs) => this.#report(jobs), { eventsWindowMs: options.eventsWindowMs });
  }

  /** One report; to a Worker older than the route (it answers 404), each job's calls on their own routes. */
  async #report(jobs: ReportItem[]): Promise<ReportAnswer[]> {
    const health = await this.health();
    if (!this.#perJob) {
      try {
        return reportResponse.parse(await this.#post("runner/v1/report", { jobs, ...health })).jobs;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) throw error;
        this.#perJob = true;
      }
    }
    return Promise.all(jobs.map((job) => this.#reportAlone(job, health)));
  }

  async #reportAlone(job: ReportItem, health: HealthReport): Promise<ReportAnswer> {
    const { jobId, leaseToken, heartbeat, events } = job;
    try {
      if (events.length > 0)
        await this.#post(`runner/v1/jobs/${encodeURIComponent(jobId)}/events`, { leaseToken, events });
      if (!heartbeat) return { jobId, ok: true };
      const answer = await this.#post(`runner/v1/jobs/${encodeURIComponent(jobId)}/heartbeat`, {
        leaseToken,
        ...health,
      });
      const { leaseExpiresAt, leaseMs = FALLBACK_LEASE_MS, cancelled } = heartbeatResponse.parse(answer);
      return { jobId, ok: true, lease: { leaseExpiresAt, leaseMs, cancelled } };
    } catch (error) {
      if (error instanceof ApiError && error.status !== NETWORK && error.status < 500 && error.status !== 401)
        return { jobId, ok: false, status: error.status, error: error.message };
      throw error;
    }
  }

  set token(token: string) {
    this.#token = token;
  }

  async register(body: {
    registrationToken: string;
    name: string;
    version: string;
  }): Promise<RegisterResponse> {
    const request = { ...body, sandbox: this.#sandbox };
    return registerResponse.parse(await this.#post("runner/v1/register", request, { auth: false }));
  }

  /** The runner's next token; the current one works until the next one is first used. */
  async rotate(): Promise<RotateResponse> {
    return rotateResponse.parse(await this.#post("runner/v1/rotate", {}));
  }

  /** Says the runner stops, so that it shows offline at once; any later call says it is back. */
  async offline(timeoutMs: number): Promise<void> {
    await this.#post("runner/v1/offline", {}, { timeout: timeoutMs });
  }

  /** Long-polls for a job; null when the Worker had none within `waitMs`. */
  async claim(
    body: { waitMs: number; holding: string[]; projects?: string[] },
    signal?: AbortSignal,
  ): Promise<Claim | null> {
    const timeout = body.waitMs + CLAIM_SLACK_MS;
    const request = { ...body, ...(await this.health()), sandbox: this.#sandbox };
    const answer = await this.#post("runner/v1/claim", request, { signal, timeout });
    return answer === null ? null : claimResponse.parse(answer);
  }

  /** Renews the job's lease, with the other heartbeats due now; `urgent`: at once. */
  heartbeat(jobId: string, leaseToken: string, options: { urgent?: boolean } = {}): Promise<RenewedLease> {
    return this.#reports.heartbeat(jobId, leaseToken, options.urgent);
  }

  /** Reports the job's events within the events window; `urgent`: at once. */
  events(jobId: string, leaseToken: string, events: RunnerEvent[], options: { urgent?: boolean } = {}) {
    return this.#reports.events(jobId, leaseToken, events, options.urgent);
  }

  /** Sends what waits for the next report now. */
  sendReportsNow(): void {
    this.#reports.flush();
  }

  /** Spends the job's vault approval of `step` before it runs; `fired: false` says why it may not. */
  async fireStep(jobId: string, leaseToken: string, step: string): Promise<FireResponse> {
    return fireResponse.parse(await this.#job(jobId, "fire", { leaseToken, step }));
  }

  /** A page of the project's open backlog, for an agent run's `read_backlog` tool. */
  async backlog(jobId: string, leaseToken: string, query: BacklogQuery): Promise<BacklogResponse> {
    return backlogResponse.parse(await this.#job(jobId, "backlog", { leaseToken, query }));
  }

  async complete(jobId: string, body: CompleteRequest): Promise<void> {
    await this.#job(jobId, "complete", body);
  }

  async fail(jobId: string, body: { leaseToken: string; error: string; retryable: boolean }): Promise<void> {
    await this.#job(jobId, "fail", body);
  }

  async #job(jobId: string, action: string, body: unknown): Promise<unknown> {
    try {
      return await this.#post(`runner/v1/jobs/${encodeURIComponent(jobId)}/${action}`, body);
    } catch (error) {
      if (error instanceof ApiError && LEASE_LOST.has(error.status)) {
        throw new LeaseLostError(error.status, error.message);
      }
      throw error;
    }
  }

  async #post(
    path: string,
    body: unknown,
    options: { auth?: boolean; signal?: AbortSignal; timeout?: number } = {},
  ): Promise<unknown> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    const token = this.#token;
    if (options.auth !== false) {
      if (token === undefined) throw new Error("no runner token: register first");
      headers.authorization = `Bearer ${token}`;
    }
    const timeout = AbortSignal.timeout(options.timeout ?? REQUEST_TIMEOUT_MS);
    let response: Response;
    let text: string;
    try {
      response = await fetch(new URL(path, this.#base), {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      });
      text = await response.text();
    } catch (error) {
      // The caller's own abort stays an abort; the rest is the network's doing and may pass.
      if (options.signal?.aborted) throw error;
      throw new ApiError(NETWORK, `${path}: ${timeout.aborted ? "timed out" : networkDetail(error)}`);
    }
    // A call sent with the token a rotation has since replaced: its answer speaks of a token we no longer use.
    const rotated = options.auth !== false && token !== this.#token;
    if (!response.ok) {
      // The rotated token's first use voided the old one under this call: send it again with the new one.
      if (response.status === 401 && rotated) return this.#post(path, body, options);
      const message = `${path}: HTTP ${response.status}${errorDetail(text)}`;
      if (response.status === 401) throw new UnauthorizedError(401, message);
      throw new ApiError(response.status, message);
    }
    if (!rotated && response.headers.get(TOKEN_ROTATE_HEADER) === "due") this.onRotationDue?.();
    // 204 (no job; events, complete and fail need no answer) or an empty 200.
    return text === "" ? null : JSON.parse(text);
  }
}

/**
 * Retries `call` on what may pass (network errors, timeouts, 429, 5xx) with exponential backoff; lease loss,
 * refused credentials and other 4xx fail at once.
 */
export async function withRetries<T>(
  call: () => Promise<T>,
  options: {
    attempts: number;
    signal?: AbortSignal;
    onRetry?: (error: unknown, delayMs: number) => void;
    /** Also retry an `UnauthorizedError`: a refusal that may pass for a token known to have worked. */
    retryUnauthorized?: boolean;
    /** Past `attempts`, go on retrying while this holds (a job's last word, while its lease can be valid). */
    keepTrying?: () => boolean;
    backoff?: BackoffPolicy;
  },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const retryable =
        isTransient(error) || (options.retryUnauthorized && error instanceof UnauthorizedError);
      const more = attempt < options.attempts || options.keepTrying?.() === true;
      if (!more || !retryable || options.signal?.aborted) throw error;
      const delay = backoffDelay(attempt, options.backoff ?? RETRY_BACKOFF);
      options.onRetry?.(error, delay);
      await sleep(delay, options.signal);
    }
  }
}

export const RETRY_BACKOFF = { baseMs: 500, maxMs: 30_000, jitter: 0.5 };

function isTransient(error: unknown): boolean {
  return (
    error instanceof ApiError && (error.status === NETWORK || error.status === 429 || error.status >= 500)
  );
}

/** fetch's own message is "fetch failed"; the cause says what failed (ECONNREFUSED, ENOTFOUND, ...). */
function networkDetail(error: unknown): string {
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  const message = errorMessage(error);
  return cause ? `${message} (${cause.code ?? cause.message})` : message;
}

function errorDetail(text: string): string {
  try {
    const { error } = JSON.parse(text) as { error?: unknown };
    return typeof error === "string" ? `: ${error.split("\n")[0]}` : "";
  } catch {
    return "";
  }
}

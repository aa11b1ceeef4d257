import type { z } from "zod";
import { type BackoffPolicy, backoffDelay } from "../src/domain/backoff.ts";
import { errorMessage } from "../src/error-message.ts";
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
import { measureHost } from "./host.ts";
import { sleep } from "./sleep.ts";

export type HealthReport = { disk?: DiskReport; host?: HostReport };

/**
 * The runner API client. Routes (all POST, JSON):
 *
 *   /runner/v1/register                 no auth; registerRequest → registerResponse
 *   /runner/v1/rotate                   no body → rotateResponse
 *   /runner/v1/offline                  no body → 204 (the runner stops)
 *   /runner/v1/claim                    claimRequest → 200 claimResponse | 204 nothing to do
 *   /runner/v1/jobs/:jobId/heartbeat    heartbeatRequest → heartbeatResponse
 *   /runner/v1/jobs/:jobId/events       eventsRequest → 2xx
 *   /runner/v1/jobs/:jobId/fire         fireRequest → fireResponse
 *   /runner/v1/jobs/:jobId/complete     completeRequest → 2xx
 *   /runner/v1/jobs/:jobId/fail         failRequest → 2xx
 *
 * A job call answered 403 (leased to another runner), 404 (unknown job) or 409 (not the current lease) means
 * the job is no longer ours (fenced): `LeaseLostError`. An answer asking for the token's rotation calls
 * `onRotationDue`.
 */
export class ApiError extends Error {
  /** The HTTP status, or `NETWORK` (0) when no answer came (connection refused, reset, timed out). */
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** The Worker refused the runner token: nothing this process can fix by retrying. */
export class UnauthorizedError extends ApiError {
  override name = "UnauthorizedError";
}

/** The job's lease was taken away (expired and re-leased, or unknown): stop and report nothing more. */
export class LeaseLostError extends ApiError {
  override name = "LeaseLostError";
}

type HeartbeatResponse = z.infer<typeof heartbeatResponse>;
type RegisterResponse = z.infer<typeof registerResponse>;
type RotateResponse = z.infer<typeof rotateResponse>;

export const NETWORK = 0;
const LEASE_LOST = new Set([403, 404, 409]);
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

  /**
   * `sandbox`: what register and every claim report as the runner's sandbox, shown on the Worker's runner
   * list; "none" for a runner started with `--unsafe-no-sandbox`.
   */
  constructor(workerUrl: string, token?: string, options: { sandbox?: SandboxKind } = {}) {
    this.#base = new URL(workerUrl.endsWith("/") ? workerUrl : `${workerUrl}/`);
    this.#token = token;
    this.#sandbox = options.sandbox ?? "bubblewrap";
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

  async heartbeat(jobId: string, leaseToken: string): Promise<HeartbeatResponse> {
    const health = await this.health();
    return heartbeatResponse.parse(await this.#job(jobId, "heartbeat", { leaseToken, ...health }));
  }

  async events(jobId: string, leaseToken: string, events: RunnerEvent[]): Promise<void> {
    await this.#job(jobId, "events", { leaseToken, events });
  }

  /** Spends the job's vault approval of `step` before it runs; `fired: false` says why it may not. */
  async fireStep(jobId: string, leaseToken: string, step: string): Promise<FireResponse> {
    return fireResponse.parse(await this.#job(jobId, "fire", { leaseToken, step }));
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

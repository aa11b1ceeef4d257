/** Exponential backoff with a cap and optional full jitter (AWS "full jitter": uniform in [0, delay]). */
export type BackoffPolicy = {
  baseMs: number;
  maxMs: number;
  /** 0 = deterministic; 1 = full jitter. */
  jitter: number;
};

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 5 * 60_000, jitter: 0 };

/**
 * Delay before retry number `attempt` (1 = first retry). `random` is injected so callers and tests stay
 * deterministic.
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random = Math.random,
): number {
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be a positive integer: ${attempt}`);
  // 2 ** 52 already exceeds any sane cap; clamping the exponent keeps the arithmetic finite.
  const exp = Math.min(attempt - 1, 52);
  const delay = Math.min(policy.maxMs, policy.baseMs * 2 ** exp);
  const jitterPart = delay * policy.jitter * random();
  return Math.round(delay - jitterPart);
}

/** How far apart a poll's attempts grow by default: well below the failure backoff's minutes. */
export const DEFAULT_POLL_MAX_MS = 20_000;
/** A project's cap on it (`effects.pollMaxMs`) is at most the failure backoff's. */
export const MAX_POLL_MS = 5 * 60_000;

/**
 * The schedule of a row that is tried again. A poll (CI still runs, a merge turn is held: nothing failed) is
 * asked again from the failure backoff's second step on (1 s by default), doubling only up to `pollMaxMs`, so
 * what it waits for is seen within that long of happening however long it took; a fifth of jitter keeps
 * issues polling together apart. A failure keeps `failure`, the backoff that spares a forge in trouble.
 */
export function retryPolicy(
  poll: boolean,
  failure: BackoffPolicy,
  pollMaxMs = DEFAULT_POLL_MAX_MS,
): BackoffPolicy {
  if (!poll) return failure;
  const maxMs = Math.min(pollMaxMs, failure.maxMs);
  return { baseMs: Math.min(2 * failure.baseMs, maxMs), maxMs, jitter: 0.2 };
}

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

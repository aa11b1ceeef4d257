/**
 * Whether an effect's failure is worth retrying. A forge that refuses for good (a token that lost its rights,
 * a deleted issue, a request it will never accept) is told the same on every retry: such an effect goes to
 * the dead letter at once instead of holding its lane. Everything else (5xx, rate limits, no answer at all,
 * our own transient errors) is retried with backoff, up to the project's `effects.maxAttempts`.
 */

/** `waiting`: not a failure at all, an effect that polls (CI still pending); the state's own timer bounds it. */
export type FailureKind = "permanent" | "transient" | "waiting";

/**
 * What a failure looks like from outside: a forge error carries the HTTP status it was answered with. A
 * `waiting` one with `backoff` waits on something that is itself failing (a forge that does not answer).
 */
export type FailureShape = {
  status?: number;
  message: string;
  reason?: string;
  waiting?: true;
  backoff?: true;
};

const PERMANENT = new Set([403, 404, 410, 422]);

export function classifyFailure(failure: FailureShape): FailureKind {
  if (failure.waiting) return "waiting";
  const { status } = failure;
  if (status === undefined) return "transient";
  // 422 without a reason is a validation race at worst (a branch a moment before the forge sees it).
  if (status === 422) return (failure.reason ?? "").trim() === "" ? "transient" : "permanent";
  return PERMANENT.has(status) ? "permanent" : "transient";
}

/** Reads the shape from anything thrown: an Error, with a numeric `status` where the forge answered. */
export function failureOf(error: unknown): FailureShape {
  const message = error instanceof Error ? error.message : String(error);
  // A poll's "not yet" (see CiPending) says so with `waiting: true`.
  if (typeof error === "object" && error !== null && "waiting" in error && error.waiting === true) {
    const backoff = "backoff" in error && error.backoff === true;
    return backoff ? { message, waiting: true, backoff } : { message, waiting: true };
  }
  const status =
    typeof error === "object" && error !== null && "status" in error && typeof error.status === "number"
      ? error.status
      : undefined;
  // A rate-limit answer is a 403 on GitHub; the client marks it with a retry time: not a refusal.
  const retryAt = typeof error === "object" && error !== null && "retryAt" in error;
  if (retryAt || status === undefined) return { message };
  const reason =
    typeof error === "object" &&
    error !== null &&
    "forgeMessage" in error &&
    typeof error.forgeMessage === "string"
      ? error.forgeMessage
      : undefined;
  return reason === undefined ? { status, message } : { status, message, reason };
}

/**
 * Whether the next attempt is a poll (src/domain/backoff.ts `retryPolicy`): what it waits for is under way and
 * due any moment. A failure, or a wait on a failing forge, keeps the failure backoff.
 */
export function polls(failure: FailureShape): boolean {
  return classifyFailure(failure) === "waiting" && failure.backoff !== true;
}

/** Whether a failed attempt (the `attempts`-th) sends the effect to the dead letter. */
export function deadLetters(kind: FailureKind, attempts: number, maxAttempts: number): boolean {
  if (kind === "waiting") return false;
  return kind === "permanent" || attempts >= maxAttempts;
}

/**
 * When an error says the request may be made again (a pacer's turn, a forge's rate limit with its wait):
 * such a request was not refused, only put off; null for any other error.
 */
export function waitUntil(error: unknown): number | null {
  if (typeof error !== "object" || error === null || !("retryAt" in error)) return null;
  return typeof error.retryAt === "number" && Number.isFinite(error.retryAt) ? error.retryAt : null;
}

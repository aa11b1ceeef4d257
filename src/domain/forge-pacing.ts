/**
 * Pacing of writes to a forge, per token: every writer holding the same token (each issue's object, the
 * project's, the Worker) asks one pacer before it writes, so together they stay within the forge's limits.
 * Pure: the pacer's state and the time in, when the write may go out.
 *
 * GitHub documents secondary rate limits on top of the hourly budget: no more than 80 content-creating
 * requests a minute and 500 an hour, no more than 100 concurrent requests, no more than 900 points a minute
 * (a write costs 5), and, for many writes by one user, at least a second between them. Over them it answers
 * 403 or 429, with `retry-after` or `x-ratelimit-reset` when it says how long to wait (a minute when not).
 */

/** A limit on content-creating requests: at most `count` within any `windowMs`. */
export type CreateLimit = { count: number; windowMs: number };

export type PacingLimits = {
  /** Content-creating requests (POST: an issue, a comment, a pull request, a review, a label). */
  creates: CreateLimit[];
  /**
   * Least time between two writes (POST, PATCH, PUT, DELETE): GitHub's "at least one second between each",
   * which also keeps the writes in flight at once far under its concurrency limit and its 900 points a minute
   * (60 writes, 300 points).
   */
  writeSpacingMs: number;
};

/** GitHub's documented limits for content creation, and its advice on spacing writes. */
export const GITHUB_PACING: PacingLimits = {
  creates: [
    { count: 80, windowMs: 60_000 },
    { count: 500, windowMs: 60 * 60_000 },
  ],
  writeSpacingMs: 1_000,
};

/** The wait GitHub asks for after a secondary rate limit that names none. */
export const UNNAMED_WAIT_MS = 60_000;

export type PacingState = {
  /** When each content-creating write in the longest window went (or will go), oldest first. */
  creates: number[];
  /** When the latest write went (or will go). */
  lastWriteAt: number;
  /** The forge said to wait until then (a 403 or 429 with its rate limit spent). */
  blockedUntil: number;
};

export const FRESH: PacingState = { creates: [], lastWriteAt: 0, blockedUntil: 0 };

export type WriteKind = "create" | "write";

export type Grant =
  /** Go at `at` (now, or within the wait the writer accepted): the write is counted. */
  | { go: true; at: number; state: PacingState }
  /** Not before `retryAt`: nothing was counted, ask again then. */
  | { go: false; retryAt: number; state: PacingState };

/**
 * When a write may go: the earliest moment at or after `now` that keeps every limit, counted if it is within
 * `maxWaitMs` (the writer waits for it), else only named. Blocked writes of every kind wait for the block.
 */
export function paceWrite(
  state: PacingState,
  kind: WriteKind,
  now: number,
  limits: PacingLimits,
  maxWaitMs: number,
): Grant {
  const longest = Math.max(0, ...limits.creates.map((limit) => limit.windowMs));
  const creates = state.creates.filter((at) => at > now - longest);
  let at = Math.max(now, state.blockedUntil, state.lastWriteAt + limits.writeSpacingMs);
  if (kind === "create") {
    // Each window's oldest counted write must have left it: push `at` until none is full.
    for (let moved = true; moved; ) {
      moved = false;
      for (const { count, windowMs } of limits.creates) {
        const inWindow = creates.filter((t) => t > at - windowMs);
        const oldest = inWindow[inWindow.length - count];
        if (inWindow.length >= count && oldest !== undefined) {
          at = oldest + windowMs;
          moved = true;
        }
      }
    }
  }
  const pruned = { ...state, creates };
  if (at - now > maxWaitMs) return { go: false, retryAt: at, state: pruned };
  return {
    go: true,
    at,
    state: {
      ...pruned,
      creates: kind === "create" ? [...creates, at].sort((a, b) => a - b) : creates,
      lastWriteAt: Math.max(state.lastWriteAt, at),
    },
  };
}

/** The forge refused for its rate limit until `until`: every write of the token waits for it. */
export const blockUntil = (state: PacingState, until: number): PacingState => ({
  ...state,
  blockedUntil: Math.max(state.blockedUntil, until),
});

/** What counts as content-creating: a POST creates (an issue, a comment, a pull request, a review, a label). */
export const writeKind = (method: string): WriteKind | null =>
  method === "GET" || method === "HEAD" ? null : method === "POST" ? "create" : "write";

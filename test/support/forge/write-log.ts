/**
 * The writes each repository received (for tests of a client that paces itself), and refusals a test asks
 * for: GitHub's answer to a secondary rate limit, a 403 with `Retry-After`, the write not done.
 */
import type { Reply } from "./http.ts";

/** A write as it arrived; `refused`: answered as over a secondary rate limit, not done. */
export type Write = { method: string; path: string; at: number; refused: boolean };

export class WriteLog {
  private readonly log = new Map<string, Write[]>();
  private readonly refusals = new Map<string, { left: number; retryAfterSeconds: number }>();

  record(repo: string, write: Write): void {
    const key = repo.toLowerCase();
    this.log.set(key, [...(this.log.get(key) ?? []), write]);
  }

  writes(repo: string): Write[] {
    return [...(this.log.get(repo.toLowerCase()) ?? [])];
  }

  /** The next `count` writes to `repo` are refused with `Retry-After: retryAfterSeconds`. */
  refuse(repo: string, count: number, retryAfterSeconds: number): void {
    this.refusals.set(repo.toLowerCase(), { left: count, retryAfterSeconds });
  }

  /** The refusal for this write, if one is due (counted off). */
  refusal(repo: string): Reply | null {
    const key = repo.toLowerCase();
    const due = this.refusals.get(key);
    if (!due || due.left <= 0) return null;
    due.left--;
    return secondaryLimitReply(due.retryAfterSeconds);
  }
}

/** GitHub's answer over a secondary rate limit: 403, its message, `Retry-After`. */
export function secondaryLimitReply(retryAfterSeconds: number): Reply {
  return {
    status: 403,
    headers: { "Retry-After": String(retryAfterSeconds) },
    json: {
      message:
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
      documentation_url:
        "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    },
  };
}

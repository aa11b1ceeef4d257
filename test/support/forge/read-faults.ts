/**
 * Reads a test makes fail, as a forge fails one item while the rest answer: a pull request deleted meanwhile
 * (404, Gitea's not-found shape), an internal error (500), or a rate limit (GitHub's 403 for a secondary limit,
 * with `Retry-After`). Every GET of the path fails until the test lifts it.
 */
import { ApiError, errorReply, notFound, type Reply } from "./http.ts";
import { secondaryLimitReply } from "./write-log.ts";

export type ReadFault =
  | { kind: "missing" }
  | { kind: "error" }
  | { kind: "rate-limited"; retryAfterSeconds: number };

export class ReadFaults {
  private readonly faults = new Map<string, ReadFault>();

  /** `path` below the repository (`/pulls/3/reviews`); null lifts it. */
  set(repo: string, path: string, fault: ReadFault | null): void {
    const key = `${repo.toLowerCase()}${path}`;
    if (fault) this.faults.set(key, fault);
    else this.faults.delete(key);
  }

  /** The answer for a GET of `path` in `repo` that must fail; null when it reads as usual. */
  reply(repo: string, path: string, swaggerUrl: string): Reply | null {
    const fault = this.faults.get(`${repo.toLowerCase()}${path}`);
    if (!fault) return null;
    if (fault.kind === "missing") return errorReply(notFound(), swaggerUrl);
    if (fault.kind === "error") return errorReply(new ApiError(500, "internal server error"), swaggerUrl);
    return secondaryLimitReply(fault.retryAfterSeconds);
  }
}

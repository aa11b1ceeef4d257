/**
 * GitHub's way with conditional requests and the rate limit, on the stand-in: every JSON answer to a GET
 * carries an ETag; a request whose `If-None-Match` names the current one is answered `304 Not Modified` with
 * no body and is not charged. Every other API request is charged to the token's user, whose remaining budget
 * each answer reports in `X-RateLimit-*` headers.
 */
import { createHash } from "node:crypto";
import type { Reply } from "./http.ts";
import { goJson } from "./http.ts";

/** The hourly budget a GitHub token has; the stand-in never refuses, it only counts. */
export const RATE_LIMIT = 5_000;

export type ApiCalls = { charged: number; notModified: number };

export class ApiBudget {
  private readonly byUser = new Map<string, number>();
  private readonly byRepo = new Map<string, ApiCalls>();

  /** Counts the request and answers with a 304 when the client already holds this body. */
  answer(
    reply: Reply,
    request: { method: string; ifNoneMatch?: string; user: string; repo?: string },
  ): Reply {
    const tag =
      request.method === "GET" && reply.status === 200 && reply.json !== undefined ? etag(reply) : null;
    const calls = this.calls(request.repo);
    if (tag !== null && matches(request.ifNoneMatch, tag)) {
      calls.notModified++;
      return { status: 304, headers: { ETag: tag, ...this.headers(request.user) } };
    }
    calls.charged++;
    this.byUser.set(request.user, (this.byUser.get(request.user) ?? 0) + 1);
    const headers = { ...reply.headers, ...this.headers(request.user), ...(tag && { ETag: tag }) };
    return { ...reply, headers };
  }

  /** Sets what `user` has spent of this window (tests of a client that paces itself). */
  spend(user: string, used: number): void {
    this.byUser.set(user, used);
  }

  /** Requests about one repository (`owner/name`, any case) since the forge started. */
  callsFor(repo: string): ApiCalls {
    return { ...this.calls(repo.toLowerCase()) };
  }

  private calls(repo: string | undefined): ApiCalls {
    const key = repo?.toLowerCase() ?? "";
    let calls = this.byRepo.get(key);
    if (!calls) {
      calls = { charged: 0, notModified: 0 };
      this.byRepo.set(key, calls);
    }
    return calls;
  }

  private headers(user: string): Record<string, string> {
    const used = this.byUser.get(user) ?? 0;
    return {
      "X-RateLimit-Limit": String(RATE_LIMIT),
      "X-RateLimit-Remaining": String(Math.max(0, RATE_LIMIT - used)),
      "X-RateLimit-Used": String(used),
      // GitHub's window: an hour, reset at an epoch second. The stand-in's never resets; it names the next hour.
      "X-RateLimit-Reset": String(Math.ceil(Date.now() / 3_600_000) * 3_600),
    };
  }
}

/** A weak validator over the body and the headers that shape a page (Link, X-Total-Count). */
function etag(reply: Reply): string {
  const hash = createHash("sha1")
    .update(goJson(reply.json))
    .update(reply.headers?.Link ?? "")
    .update(reply.headers?.["X-Total-Count"] ?? "");
  return `W/"${hash.digest("hex")}"`;
}

function matches(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  return header.split(",").some((candidate) => candidate.trim() === tag || candidate.trim() === "*");
}

/**
 * The prompt cache's lifetime a session's requests ask for. Claude Code marks its breakpoints (the system
 * prompt's last block, the newest message) with the API's default, 5 minutes; where the project's rounds
 * routinely start later than that (CI that takes longer), the model proxy asks for an hour instead, so that a
 * resumed session reads its transcript from the cache rather than writing it again (docs/performance.md,
 * "Prompt cache"). Every breakpoint gets the same lifetime, which keeps the API's rule that a 1-hour one never
 * follows a 5-minute one.
 */
import type { MessagesRequest } from "./request-shape.ts";

export type CacheLifetime = "5m" | "1h";

type Marked = { cache_control?: unknown };

/** The request with every breakpoint (tools, system, message blocks, tool results' blocks, top level) at `ttl`. */
export function withCacheLifetime(request: MessagesRequest, ttl: CacheLifetime): MessagesRequest {
  if (ttl === "5m") return request;
  const mark = <T>(block: T): T => {
    const control = (block as Marked).cache_control;
    return control && typeof control === "object" ? { ...block, cache_control: { ...control, ttl } } : block;
  };
  const content = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map((block: unknown) => {
          if (typeof block !== "object" || block === null) return block;
          const marked = mark(block as Record<string, unknown>);
          return "content" in marked && Array.isArray(marked.content)
            ? { ...marked, content: marked.content.map((inner: unknown) => mark(inner)) }
            : marked;
        })
      : value;
  return {
    ...mark(request),
    ...(request.tools && { tools: request.tools.map(mark) }),
    ...(Array.isArray(request.system) && { system: request.system.map(mark) }),
    messages: request.messages.map((message) => ({
      ...message,
      content: content(message.content) as typeof message.content,
    })),
  };
}

/**
 * What the model proxy forwards: the Messages API's request shape as Claude Code sends it, and nothing that
 * makes the API reach the network for the session (its sandbox has loopback only) or bill beyond the meter's
 * figures. Refused: `mcp_servers` (the API connects to a URL), server tools (`web_fetch`, `web_search`, code
 * execution, …: every typed tool), `container`, image and document sources by URL or by Files-API id, the
 * content blocks of server tools, server-side compaction, and every top-level field not listed here. The
 * betas are the ones Claude Code sends (recorded from the real binary against the stand-in), others dropped.
 */
import { z } from "zod";

/** `anthropic-beta` flags Claude Code 2.1 sends; a flag outside this list is dropped before forwarding. */
export const CLAUDE_CODE_BETAS: readonly string[] = [
  "claude-code-20250219",
  "interleaved-thinking-2025-05-14",
  "context-management-2025-06-27",
  "per-turn-control-2026-07-01",
  "mid-conversation-tool-changes-2026-07-01",
  "thinking-token-count-2026-05-13",
  "advanced-tool-use-2025-11-20",
  "effort-2025-11-24",
  "thinking-display-updates-2026-08-18",
];

/** Inline data only: a `url` or `file` source would have the API fetch something for the session. */
const source = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("base64"), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal("text"), media_type: z.string().optional(), data: z.string() }),
  z.looseObject({ type: z.literal("content"), content: z.unknown() }),
]);

const inert = z.enum(["text", "tool_reference", "search_result", "thinking", "redacted_thinking"]);
const withSource = z.looseObject({ type: z.enum(["image", "document"]), source });
/** What a tool's result may hold. */
const resultBlock = z.union([z.looseObject({ type: inert }), withSource]);

const contentBlock = z.union([
  z.looseObject({ type: inert }),
  withSource,
  z.looseObject({ type: z.literal("tool_use"), id: z.string(), name: z.string() }),
  z.looseObject({
    type: z.literal("tool_result"),
    tool_use_id: z.string(),
    content: z.union([z.string(), z.array(resultBlock)]).optional(),
  }),
]);

const message = z.looseObject({
  // Claude Code also sends `system` entries among the messages.
  role: z.enum(["user", "assistant", "system"]),
  content: z.union([z.string(), z.array(contentBlock)]),
});

/** A tool the session's own client runs: no `type` (or `custom`); a typed tool is the API's to run. */
const tool = z.looseObject({
  type: z.literal("custom").optional(),
  name: z.string().min(1).max(200),
  input_schema: z.record(z.string(), z.unknown()),
});

const thinking = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("enabled"), budget_tokens: z.number().int().positive() }),
  z.looseObject({ type: z.literal("adaptive") }),
  z.looseObject({ type: z.literal("disabled") }),
]);

/** Clearing old thinking or tool results saves tokens; server-side compaction is a model call of its own. */
const contextManagement = z.looseObject({
  edits: z.array(z.looseObject({ type: z.string().regex(/^clear_(thinking|tool_uses)_\d+$/) })).optional(),
});

/** A prompt-cache breakpoint; `ttl` absent is 5 minutes. */
const cacheControl = z.looseObject({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() });

const textOrBlocks = z.union([
  z.string(),
  z.array(z.looseObject({ type: z.literal("text"), text: z.string() })),
]);

const common = {
  model: z.string().min(1).max(200),
  messages: z.array(message),
  system: textOrBlocks.optional(),
  tools: z.array(tool).optional(),
  tool_choice: z.looseObject({ type: z.enum(["auto", "any", "tool", "none"]) }).optional(),
  thinking: thinking.optional(),
  context_management: contextManagement.optional(),
  output_config: z.record(z.string(), z.unknown()).optional(),
  /** Automatic caching: a breakpoint on the last block. */
  cache_control: cacheControl.optional(),
};

const messagesRequest = z.strictObject({
  ...common,
  max_tokens: z.number().int().positive(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.number().int().optional(),
});
const countTokensRequest = z.strictObject(common);

export type MessagesRequest = z.infer<typeof messagesRequest>;

export type Shaped =
  | { ok: true; path: "/v1/messages"; request: MessagesRequest }
  | { ok: true; path: "/v1/messages/count_tokens" }
  | { ok: false; reason: string };

/** Parses a request body for `path`; the reason names the first field refused. */
export function shapeRequest(path: "/v1/messages" | "/v1/messages/count_tokens", body: unknown): Shaped {
  const parsed = (path === "/v1/messages" ? messagesRequest : countTokensRequest).safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join(".") || "body";
    return { ok: false, reason: `Conveyor's model proxy refuses this request: ${where}: ${issue?.message}` };
  }
  return path === "/v1/messages"
    ? { ok: true, path, request: parsed.data as MessagesRequest }
    : { ok: true, path };
}

/** The request's `anthropic-beta` flags that Claude Code needs, and `extra` (the OAuth flag). */
export function allowedBetas(header: string | undefined, extra: readonly string[] = []): string[] {
  const asked = (header ?? "")
    .split(",")
    .map((beta) => beta.trim())
    .filter((beta) => CLAUDE_CODE_BETAS.includes(beta));
  return [...new Set([...asked, ...extra])];
}

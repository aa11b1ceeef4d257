import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { costUsd } from "../../../src/usage/prices.ts";
import { type CacheUsage, estimateTokens, PromptCache } from "./prompt-cache.ts";
import { type Block, nextTurn, type Script, toScriptRequest } from "./script.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  /** How the request signed in, its secret kept only as a digest (sha256, hex). */
  credential: { scheme: "x-api-key" | "bearer"; sha256: string } | null;
  body: Record<string, unknown> | undefined;
  /**
   * What the real API would bill for the answer, as far as it was sent: the input once the message started,
   * the output of what was streamed before the client went away (all of it for a finished answer).
   */
  billed?: { model: string; usage: Usage };
  /** When the request arrived and when its answer ended (or the client went away), in epoch ms. */
  startedAt: number;
  endedAt?: number;
}

export type Usage = CacheUsage & { output_tokens: number };

export interface ModelStandIn {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const SECRET_HEADERS = new Set(["authorization", "x-api-key", "cookie", "proxy-authorization"]);

/**
 * `eventGapMs`: a pause between a stream's events after `message_start`, as a model takes time to generate,
 * so that a client can go away mid-answer. `now`: the clock the prompt cache's lifetimes run on (a benchmark
 * moves it on to start a round after the cache expired).
 */
export async function startModelStandIn(options: {
  script: Script;
  port?: number;
  eventGapMs?: number;
  now?: () => number;
}): Promise<ModelStandIn> {
  const requests: RecordedRequest[] = [];
  const cache = new PromptCache(options.now);

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error("model stand-in:", error);
      if (!res.headersSent) sendError(res, 500, "api_error", String(error));
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const url = new URL(req.url ?? "/", "http://stand-in");
    const raw = await readBody(req);
    const body = parseJson(raw);
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: url.pathname,
      query: url.search,
      headers: publicHeaders(req),
      credential: credentialOf(req),
      body,
      startedAt,
    };
    res.once("close", () => {
      recorded.endedAt = Date.now();
    });
    requests.push(recorded);
    const countTokens = url.pathname === "/v1/messages/count_tokens";
    if (req.method !== "POST" || (url.pathname !== "/v1/messages" && !countTokens)) {
      console.warn(`model stand-in: unhandled ${req.method} ${url.pathname}${url.search}`);
      sendError(res, 404, "not_found_error", `Not found: ${req.method} ${url.pathname}`);
      return;
    }
    if (!body) {
      sendError(res, 400, "invalid_request_error", "Body is not JSON");
      return;
    }
    if (countTokens) {
      sendJson(res, 200, { input_tokens: estimateTokens(JSON.stringify(body)) });
      return;
    }
    const turn = await nextTurn(options.script, toScriptRequest(body));
    if ("error" in turn) {
      sendError(res, turn.error.status, turn.error.type, turn.error.message);
      return;
    }
    // Only an answered request reads or writes the cache.
    const cached = cache.use(body);
    if (!cached.ok) {
      sendError(res, 400, "invalid_request_error", cached.message);
      return;
    }
    const { content, cut } = withinMaxTokens(turn.content.map(withIds), Number(body.max_tokens ?? Infinity));
    const message = {
      id: `msg_${randomUUID().replaceAll("-", "")}`,
      type: "message",
      role: "assistant",
      model: String(body.model ?? "claude-stand-in"),
      content,
      stop_reason: cut ? "max_tokens" : content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { ...cached.usage, output_tokens: estimateTokens(JSON.stringify(content)) },
    };
    const bill = (usage: Usage) => {
      recorded.billed = { model: message.model, usage };
    };
    if (body.stream === true) await streamMessage(res, message, options.eventGapMs ?? 0, bill);
    else {
      bill(message.usage);
      sendJson(res, 200, message);
    }
  }

  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, "127.0.0.1", done);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done, fail) => {
        server.close((error) => (error ? fail(error) : done()));
        server.closeAllConnections();
      }),
  };
}

/** What the real API would have billed for these requests' answers, in USD at list prices. */
export function billedUsd(requests: readonly RecordedRequest[]): number {
  return requests.reduce((sum, { billed }) => {
    if (!billed) return sum;
    const { usage } = billed;
    return (
      sum +
      costUsd(billed.model, {
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        cacheReadTokens: usage.cache_read_input_tokens,
        cacheWriteTokens: usage.cache_creation_input_tokens,
        cacheWrite1hTokens: usage.cache_creation.ephemeral_1h_input_tokens,
      })
    );
  }, 0);
}

type OutBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

/** As the API does: an answer stops at `max_tokens` (a text cut short; what does not fit is left out). */
function withinMaxTokens(blocks: OutBlock[], maxTokens: number): { content: OutBlock[]; cut: boolean } {
  if (estimateTokens(JSON.stringify(blocks)) <= maxTokens) return { content: blocks, cut: false };
  let room = maxTokens * 4;
  const content: OutBlock[] = [];
  for (const block of blocks) {
    const size = JSON.stringify(block).length;
    if (size <= room) {
      content.push(block);
      room -= size;
      continue;
    }
    // About 30 characters of the block's own JSON besides its text.
    if (block.type === "text")
      content.push({ type: "text", text: block.text.slice(0, Math.max(0, room - 30)) });
    break;
  }
  return { content, cut: true };
}

function withIds(block: Block): OutBlock {
  return block.type === "tool_use" ? { ...block, id: `toolu_${randomUUID().replaceAll("-", "")}` } : block;
}

async function streamMessage(
  res: ServerResponse,
  message: { content: OutBlock[]; stop_reason: string; usage: Usage } & Record<string, unknown>,
  gapMs: number,
  bill: (usage: Usage) => void,
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const { content, stop_reason, usage, ...head } = message;
  let streamed = "";
  const closed = new Promise<void>((done) => res.once("close", done));
  const send = async (event: string, data: Record<string, unknown>) => {
    if (res.destroyed) return false;
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const delta = data.delta as { text?: string; partial_json?: string } | undefined;
    streamed += delta?.text ?? delta?.partial_json ?? "";
    bill({ ...usage, output_tokens: Math.max(1, estimateTokens(streamed)) });
    if (gapMs > 0 && event !== "message_stop") {
      await Promise.race([closed, new Promise((resume) => setTimeout(resume, gapMs))]);
    }
    return !res.destroyed;
  };
  const events: [string, Record<string, unknown>][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: { ...head, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      },
    ],
    ["ping", { type: "ping" }],
  ];
  content.forEach((block, index) => {
    const start =
      block.type === "text"
        ? { type: "text", text: "" }
        : { type: "tool_use", id: block.id, name: block.name, input: {} };
    const delta =
      block.type === "text"
        ? { type: "text_delta", text: block.text }
        : { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
    events.push(
      ["content_block_start", { type: "content_block_start", index, content_block: start }],
      ["content_block_delta", { type: "content_block_delta", index, delta }],
      ["content_block_stop", { type: "content_block_stop", index }],
    );
  });
  events.push(
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  );
  for (const [event, data] of events) if (!(await send(event, data))) return;
  bill(usage);
  res.end();
}

function credentialOf(req: IncomingMessage): RecordedRequest["credential"] {
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  const key = req.headers["x-api-key"];
  const [scheme, secret] =
    typeof key === "string" ? (["x-api-key", key] as const) : (["bearer", bearer] as const);
  return secret ? { scheme, sha256: createHash("sha256").update(secret).digest("hex") } : null;
}

function publicHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !SECRET_HEADERS.has(name)) headers[name] = String(value);
  }
  return headers;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(raw: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": `req_${randomUUID()}` });
  res.end(JSON.stringify(value));
}

// The real error shape; `x-should-retry: false` keeps clients from retrying a scripted failure for minutes.
function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  const requestId = `req_${randomUUID().replaceAll("-", "")}`;
  res.writeHead(status, {
    "content-type": "application/json",
    "request-id": requestId,
    "x-should-retry": "false",
  });
  res.end(JSON.stringify({ type: "error", error: { type, message }, request_id: requestId }));
}

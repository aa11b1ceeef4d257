import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { errorMessage } from "../../src/error-message.ts";
import type { Usage } from "../../src/runner-api/contract.ts";
import { type CacheLifetime, withCacheLifetime } from "./cache-lifetime.ts";
import { type Metered, meterBody, StreamMeter } from "./meter.ts";
import { allowedBetas, type MessagesRequest, shapeRequest } from "./request-shape.ts";
import { type Admission, MAX_IN_FLIGHT, SpendLedger } from "./spend.ts";

export const DEFAULT_MODEL_BASE_URL = "https://api.anthropic.com";
/** Claude Code's requests carry whole transcripts; the API itself takes at most 32 MB. */
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
const PATHS = ["/v1/messages", "/v1/messages/count_tokens"] as const;
type ProxiedPath = (typeof PATHS)[number];
// Hop-by-hop headers, the client's credential, and compression (the meter reads the bytes as they pass).
const DROPPED_REQUEST_HEADERS = new Set([
  "host",
  "anthropic-beta",
  "content-type",
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
  "authorization",
  "x-api-key",
  "accept-encoding",
  "proxy-authorization",
]);
const DROPPED_RESPONSE_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"]);

/**
 * How the proxy signs in upstream: an API key, or a Claude subscription's OAuth token (`claude setup-token`),
 * which the Messages API takes as a bearer token with its beta flag.
 */
export type ModelCredential = { apiKey: string } | { oauthToken: string };
export const OAUTH_BETA = "oauth-2025-04-20";

export type ModelProxyOptions = {
  upstream: { baseUrl: string; credential: ModelCredential };
  /** What the session presents instead of the key (`x-api-key` or `Authorization: Bearer`). */
  sessionToken: string;
  /** USD the session may spend: spend.ts holds it to that. */
  budgetUsd: number;
  /** The prompt cache's lifetime its breakpoints ask for (cache-lifetime.ts); the API's default, 5 minutes, when absent. */
  cacheLifetime?: CacheLifetime;
  /** After every metered response (an abandoned stream too): the session's totals so far. */
  onUsage?: (usage: Usage) => void;
};

/** Where the proxy listens: a Unix socket bound into the sandbox, or loopback TCP for an unsandboxed session. */
export type ListenTarget = { socket: string } | { port: 0 };

/**
 * The model endpoint a session sees. It holds the API key, forwards the Messages API (streaming included) in
 * the shape request-shape.ts allows, reserves each request's worst case before it goes upstream and meters
 * every answer from the API's own usage figures as it streams (spend.ts, meter.ts). The session holds a
 * per-session token that is worth nothing anywhere else.
 */
export class ModelProxy {
  readonly #options: ModelProxyOptions;
  readonly #server: Server;
  readonly #token: Buffer;
  readonly #ledger: SpendLedger;
  #usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    usd: 0,
    turns: 0,
  };
  #refused = false;
  #counting = 0;

  private constructor(options: ModelProxyOptions) {
    this.#options = options;
    this.#token = Buffer.from(options.sessionToken);
    this.#ledger = new SpendLedger(options.budgetUsd);
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent)
          sendError(res, 502, "api_error", `the model proxy failed: ${errorMessage(error)}`);
        else res.destroy();
      });
    });
  }

  static async start(options: ModelProxyOptions, target: ListenTarget): Promise<ModelProxy> {
    const proxy = new ModelProxy(options);
    await new Promise<void>((ready, fail) => {
      proxy.#server.once("error", fail);
      if ("socket" in target) proxy.#server.listen(target.socket, ready);
      else proxy.#server.listen(0, "127.0.0.1", ready);
    });
    return proxy;
  }

  /** `http://127.0.0.1:<port>` when listening on TCP. */
  get url(): string | undefined {
    const address = this.#server.address();
    return typeof address === "object" && address !== null ? `http://127.0.0.1:${address.port}` : undefined;
  }

  /** The session's consumption so far. */
  get usage(): Usage {
    return { ...this.#usage };
  }

  /** Whether a request was refused because the budget was spent. */
  get budgetRefused(): boolean {
    return this.#refused;
  }

  close(): Promise<void> {
    return new Promise((done) => {
      this.#server.close(() => done());
      this.#server.closeAllConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://proxy");
    const path = PATHS.find((known) => known === url.pathname);
    if (req.method !== "POST" || !path) {
      return sendError(res, 404, "not_found_error", `not forwarded: ${req.method} ${url.pathname}`);
    }
    if (!this.#authorized(req)) return sendError(res, 401, "authentication_error", "invalid session token");
    const body = await readBody(req);
    if (body === null) return sendError(res, 413, "request_too_large", "request body too large");
    const shaped = shapeRequest(path, parseJson(body.toString("utf8")));
    if (!shaped.ok) return sendError(res, 400, "invalid_request_error", shaped.reason);
    if (shaped.path === "/v1/messages/count_tokens") {
      // Free upstream, but bounded like the rest.
      if (this.#counting >= MAX_IN_FLIGHT) return sendBusy(res);
      this.#counting++;
      try {
        return await this.#forward(req, res, path, url.search, body, null);
      } finally {
        this.#counting--;
      }
    }
    const lifetime = this.#options.cacheLifetime ?? "5m";
    const request = withCacheLifetime(shaped.request, lifetime);
    const thinking = request.thinking?.type === "enabled" ? request.thinking.budget_tokens : undefined;
    const ask = {
      model: request.model,
      bytes: body.length,
      maxTokens: request.max_tokens,
      thinkingBudget: thinking,
      longCache: lifetime === "1h",
    };
    const { admission, id } = this.#ledger.admit(ask);
    if (admission.kind === "busy") return sendBusy(res);
    if (admission.kind === "spent" || id === undefined) {
      this.#refused = true;
      const { budgetUsd, spentUsd } = this.#ledger;
      return sendError(
        res,
        400,
        "invalid_request_error",
        `Conveyor: this session's budget is spent: $${spentUsd.toFixed(4)} of $${budgetUsd.toFixed(4)} used, and what is left cannot pay for this request's worst case`,
      );
    }
    const flight: Flight = {
      id,
      model: request.model,
      stream: request.stream === true,
      inputUsd: admission.inputUsd,
      metered: null,
      cutUnmetered: false,
    };
    const sent = Buffer.from(JSON.stringify(lowered(request, admission)));
    try {
      await this.#forward(req, res, path, url.search, sent, flight);
    } finally {
      // Cut before the API said what the input cost: it may have read it already, so the estimate counts.
      const usd = Math.max(flight.metered?.usd ?? 0, flight.cutUnmetered ? flight.inputUsd : 0);
      this.#ledger.settle(id, usd);
      if (flight.metered || usd > 0) this.#add(flight.metered ?? unmetered(flight.model, usd));
    }
  }

  /**
   * Sends `body` upstream and the answer back. A metered request's answer is metered as it passes (into
   * `flight.metered`): a stream chunk by chunk, cancelled upstream when the client goes away and metered as
   * far as it came; a JSON answer read whole even then, since the API bills it whole.
   */
  async #forward(
    req: IncomingMessage,
    res: ServerResponse,
    path: ProxiedPath,
    search: string,
    body: Buffer,
    flight: Flight | null,
  ): Promise<void> {
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished && (flight === null || flight.stream)) abort.abort();
    });
    const meter = new StreamMeter(flight?.model ?? "unknown");
    let answered = false;
    try {
      const upstream = await fetch(`${this.#options.upstream.baseUrl.replace(/\/$/, "")}${path}${search}`, {
        method: "POST",
        headers: this.#forwardedHeaders(req),
        body,
        signal: abort.signal,
      });
      const headers: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!DROPPED_RESPONSE_HEADERS.has(name)) headers[name] = value;
      });
      if (!res.destroyed) res.writeHead(upstream.status, headers);
      // The API bills no error.
      answered = !upstream.ok;
      if (upstream.body === null) return void res.end();
      const metered = flight !== null && upstream.ok ? flight : null;
      const stream = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of Readable.fromWeb(upstream.body as WebReadableStream<Uint8Array>)) {
          const bytes = chunk as Buffer;
          if (metered && stream) {
            meter.write(bytes);
            metered.metered = meter.current();
            this.#ledger.meter(metered.id, metered.metered.usd);
          } else if (metered) chunks.push(bytes);
          await send(res, bytes);
        }
        res.end();
      } finally {
        if (metered && stream) metered.metered = meter.result();
        if (metered && !stream) {
          metered.metered = meterBody(metered.model, Buffer.concat(chunks).toString("utf8"));
          answered = true;
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    } finally {
      if (flight) flight.cutUnmetered = abort.signal.aborted && !answered && !meter.started;
    }
  }

  #add(metered: Metered): void {
    const u = this.#usage;
    this.#usage = {
      inputTokens: u.inputTokens + metered.inputTokens,
      outputTokens: u.outputTokens + metered.outputTokens,
      cacheReadTokens: u.cacheReadTokens + metered.cacheReadTokens,
      cacheWriteTokens: u.cacheWriteTokens + metered.cacheWriteTokens,
      usd: u.usd + metered.usd,
      turns: u.turns + 1,
    };
    this.#options.onUsage?.(this.usage);
  }

  #authorized(req: IncomingMessage): boolean {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const presented = req.headers["x-api-key"] ?? bearer;
    if (typeof presented !== "string") return false;
    const given = Buffer.from(presented);
    return given.length === this.#token.length && timingSafeEqual(given, this.#token);
  }

  #forwardedHeaders(req: IncomingMessage): Headers {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (DROPPED_REQUEST_HEADERS.has(name) || value === undefined) continue;
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const { credential } = this.#options.upstream;
    if ("apiKey" in credential) headers.set("x-api-key", credential.apiKey);
    else headers.set("authorization", `Bearer ${credential.oauthToken}`);
    const asked = req.headers["anthropic-beta"];
    const betas = allowedBetas(
      Array.isArray(asked) ? asked.join(",") : asked,
      "apiKey" in credential ? [] : [OAUTH_BETA],
    );
    if (betas.length > 0) headers.set("anthropic-beta", betas.join(","));
    headers.set("content-type", "application/json");
    headers.set("accept-encoding", "identity");
    return headers;
  }
}

/** A metered request on its way upstream. */
type Flight = {
  id: number;
  model: string;
  /** Asked for a stream: the client going away cancels it upstream. */
  stream: boolean;
  /** Its input's share of the reservation. */
  inputUsd: number;
  metered: Metered | null;
  /** Cancelled before the API reported its input. */
  cutUnmetered: boolean;
};

/** What a request cut before the API reported anything is charged: its input's estimate. */
function unmetered(model: string, usd: number): Metered {
  return { model, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd };
}

/** The request as it goes upstream: with `max_tokens` (and a thinking budget over it) lowered where it must be. */
function lowered(
  request: MessagesRequest,
  admission: Extract<Admission, { kind: "forward" }>,
): MessagesRequest {
  if (admission.maxTokens === undefined) return request;
  const thinking =
    admission.thinkingBudget !== undefined && request.thinking?.type === "enabled"
      ? { thinking: { ...request.thinking, budget_tokens: admission.thinkingBudget } }
      : {};
  return { ...request, max_tokens: admission.maxTokens, ...thinking };
}

/** Writes a chunk, waiting for the client to take it; a client gone away takes nothing more. */
async function send(res: ServerResponse, bytes: Buffer): Promise<void> {
  if (res.destroyed || res.write(bytes)) return;
  await new Promise<void>((done) => {
    res.once("drain", done);
    res.once("close", done);
  });
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Too many requests in flight, or the budget is held by them: Claude Code retries a 429 after a pause. */
function sendBusy(res: ServerResponse): void {
  res.setHeader("retry-after", "1");
  sendError(
    res,
    429,
    "rate_limit_error",
    "Conveyor: this session's requests in flight hold its budget; retry shortly",
  );
}

function sendError(res: ServerResponse, status: number, type: string, text: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ type: "error", error: { type, message: text } }));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

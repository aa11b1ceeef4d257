import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { z } from "zod";
import { errorMessage } from "../../src/error-message.ts";
import type { Usage } from "../../src/runner-api/contract.ts";
import { type Metered, meterBody, StreamMeter } from "./meter.ts";

export const DEFAULT_MODEL_BASE_URL = "https://api.anthropic.com";
/** Claude Code's requests carry whole transcripts; far beyond any real one is refused. */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
const PATHS = new Set(["/v1/messages", "/v1/messages/count_tokens"]);
// Hop-by-hop headers, the client's credential, and compression (the meter reads the bytes as they pass).
const DROPPED_REQUEST_HEADERS = new Set([
  "host",
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
  /** USD the session may spend; requests are refused once it is spent. */
  budgetUsd: number;
  /** After every metered response: the session's totals so far. */
  onUsage?: (usage: Usage) => void;
};

/** Where the proxy listens: a Unix socket bound into the sandbox, or loopback TCP for an unsandboxed session. */
export type ListenTarget = { socket: string } | { port: 0 };

const requestSchema = z.looseObject({ model: z.string().max(200).default("unknown") });

/**
 * The model endpoint a session sees. It holds the API key, forwards the Messages API (streaming included),
 * meters every response from the API's own usage figures, and refuses requests once the session's budget is
 * spent. The session holds a per-session token that is worth nothing anywhere else.
 */
export class ModelProxy {
  readonly #options: ModelProxyOptions;
  readonly #server: Server;
  readonly #token: Buffer;
  #usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    usd: 0,
    turns: 0,
  };
  #refused = false;

  private constructor(options: ModelProxyOptions) {
    this.#options = options;
    this.#token = Buffer.from(options.sessionToken);
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
    if (req.method !== "POST" || !PATHS.has(url.pathname)) {
      return sendError(res, 404, "not_found_error", `not forwarded: ${req.method} ${url.pathname}`);
    }
    if (!this.#authorized(req)) return sendError(res, 401, "authentication_error", "invalid session token");
    const spent = this.#usage.usd;
    if (url.pathname === "/v1/messages" && spent >= this.#options.budgetUsd) {
      this.#refused = true;
      return sendError(
        res,
        400,
        "invalid_request_error",
        `Conveyor: this session's budget is spent ($${spent.toFixed(4)} of $${this.#options.budgetUsd.toFixed(4)})`,
      );
    }
    const body = await readBody(req);
    if (body === null) return sendError(res, 413, "request_too_large", "request body too large");
    const model = requestSchema.safeParse(parseJson(body.toString("utf8")));

    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const upstream = await fetch(
      `${this.#options.upstream.baseUrl.replace(/\/$/, "")}${url.pathname}${url.search}`,
      {
        method: "POST",
        headers: this.#forwardedHeaders(req),
        body,
        signal: abort.signal,
      },
    );
    const headers: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!DROPPED_RESPONSE_HEADERS.has(name)) headers[name] = value;
    });
    res.writeHead(upstream.status, headers);
    if (upstream.body === null) return void res.end();

    const metered = url.pathname === "/v1/messages" && upstream.ok;
    const requestModel = model.success ? model.data.model : "unknown";
    const stream = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
    const meter = new StreamMeter(requestModel);
    const chunks: Buffer[] = [];
    for await (const chunk of Readable.fromWeb(upstream.body as WebReadableStream<Uint8Array>)) {
      const bytes = chunk as Buffer;
      if (metered) {
        if (stream) meter.write(bytes);
        else chunks.push(bytes);
      }
      if (!res.write(bytes)) await new Promise((drain) => res.once("drain", drain));
    }
    res.end();
    if (metered)
      this.#add(stream ? meter.result() : meterBody(requestModel, Buffer.concat(chunks).toString("utf8")));
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
    else {
      headers.set("authorization", `Bearer ${credential.oauthToken}`);
      const betas =
        headers
          .get("anthropic-beta")
          ?.split(",")
          .map((b) => b.trim()) ?? [];
      if (!betas.includes(OAUTH_BETA)) headers.set("anthropic-beta", [...betas, OAUTH_BETA].join(","));
    }
    headers.set("accept-encoding", "identity");
    return headers;
  }
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

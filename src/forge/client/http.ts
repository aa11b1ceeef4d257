import type { z } from "zod";
import { type BackoffPolicy, backoffDelay } from "../../domain/backoff.ts";
import { UNNAMED_WAIT_MS, type WriteKind, writeKind } from "../../domain/forge-pacing.ts";
import {
  describe,
  ForgeHttpError,
  ForgeNetworkError,
  ForgePacingWait,
  ForgeRateLimitError,
  ForgeSchemaError,
  type RequestInfo,
} from "./errors.ts";
import { isRateLimited, requestedWaitMs } from "./rate-limit.ts";

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** A GET's last answer, kept to ask again with `If-None-Match`: the ETag, the body and its page headers. */
export type CachedAnswer = { etag: string; body: string; link: string | null; total: string | null };

/**
 * Where conditional requests keep their answers (by URL). A GET whose URL has one is sent with
 * `If-None-Match`; a `304 Not Modified` (free on GitHub's rate limit) is answered from it.
 */
export interface ConditionalCache {
  get(url: string): CachedAnswer | undefined;
  put(url: string, answer: CachedAnswer): void;
}

/**
 * Paces writes across every writer of a token (src/forge/pacer.ts). With one, a write waits its turn or is
 * not sent (`ForgePacingWait`), and a rate-limit refusal is reported to it and thrown at once (with when to
 * come back) rather than slept through.
 */
export interface WritePacer {
  /** Waits until the write may go (null), or says, without counting it, when to ask again. */
  beforeWrite(kind: WriteKind): Promise<{ retryAt: number } | null>;
  /** The forge refused for its rate limit: every writer of the token waits until `until`. */
  refused(until: number): Promise<void>;
}

/** What each answer said, for a caller that meters its forge budget. */
export type ForgeAnswer = { method: HttpMethod; status: number; headers: Headers };

export interface HttpClientOptions {
  /** Names the forge in error messages. */
  forge: string;
  /** API base, e.g. `https://codeberg.org/api/v1` or `https://api.github.com`. */
  baseUrl: string;
  /** Value of the Authorization header. */
  authorization: string;
  /** The secret inside `authorization`, scrubbed from every error message. */
  token: string;
  accept?: string;
  /** Sent with every request. */
  headers?: Record<string, string>;
  fetch?: FetchLike;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
  backoff?: BackoffPolicy;
  /** Attempts per request, the first included. */
  maxAttempts?: number;
  /** Longest wait the client sits through for a rate limit or Retry-After; beyond it, it fails at once. */
  maxWaitMs?: number;
  /** Per attempt. */
  timeoutMs?: number;
  conditional?: ConditionalCache;
  /** Told of every answer (304s included) before it is read. */
  observe?: (answer: ForgeAnswer) => void;
  pacer?: WritePacer;
}

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface HttpRequest {
  method: HttpMethod;
  /** Relative to the API base, starting with `/`; path segments already encoded. */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  accept?: string;
  /**
   * Safe to send twice (default: every method but POST). A request that is not is retried only when the
   * forge says it did not act on it (429, rate limit, 503 with Retry-After): a lost answer to a POST that
   * did create a comment must not create a second one.
   */
  idempotent?: boolean;
}

export const DEFAULT_HTTP_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 10_000, jitter: 0.5 };
const DEFAULT_MAX_ATTEMPTS = 4;
const DEFAULT_MAX_WAIT_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 30_000;
const MESSAGE_LIMIT = 300;

// Unbound `fetch` throws "Illegal invocation" in Workers; call it through the global each time.
const globalFetch: FetchLike = (url, init) => fetch(url, init);
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The one place that talks HTTP to a forge: auth, retries, rate limits, schema checks, safe errors. */
export class ForgeHttp {
  private readonly baseUrl: string;
  private readonly fetch: FetchLike;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly backoff: BackoffPolicy;
  private readonly maxAttempts: number;
  private readonly maxWaitMs: number;
  private readonly timeoutMs: number;
  private readonly options: HttpClientOptions;

  constructor(options: HttpClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetch = options.fetch ?? globalFetch;
    this.sleep = options.sleep ?? realSleep;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.backoff = options.backoff ?? DEFAULT_HTTP_BACKOFF;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** A JSON body, checked against `schema`. */
  async json<S extends z.ZodType>(request: HttpRequest, schema: S): Promise<z.output<S>> {
    return (await this.page(request, schema)).data;
  }

  /** Like `json`, with the response headers (for pagination). */
  async page<S extends z.ZodType>(
    request: HttpRequest,
    schema: S,
  ): Promise<{ data: z.output<S>; headers: Headers }> {
    const { response, info } = await this.exchange(request);
    const text = await response.text();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ForgeSchemaError(info, `${describe(info)}: response is not JSON: ${this.oneLine(text, 80)}`);
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new ForgeSchemaError(
        info,
        this.redact(`${describe(info)}: unexpected response: ${formatIssues(parsed.error)}`),
      );
    }
    return { data: parsed.data, headers: response.headers };
  }

  async text(request: HttpRequest): Promise<string> {
    const { response } = await this.exchange(request);
    return response.text();
  }

  /** For answers whose body does not matter (204, empty 200). */
  async send(request: HttpRequest): Promise<void> {
    const { response } = await this.exchange(request);
    await discard(response);
  }

  private async exchange(request: HttpRequest): Promise<{ response: Response; info: RequestInfo }> {
    const search = toSearch(request.query);
    const info: RequestInfo = {
      forge: this.options.forge,
      method: request.method,
      path: this.redact(request.path + search),
    };
    const url = this.baseUrl + request.path + search;
    const idempotent = request.idempotent ?? request.method !== "POST";
    const kind = writeKind(request.method);
    const pacer = this.options.pacer;

    for (let attempt = 1; ; attempt++) {
      const last = attempt >= this.maxAttempts;
      if (pacer && kind) {
        const later = await pacer.beforeWrite(kind);
        if (later) throw new ForgePacingWait(info, later.retryAt);
      }
      let response: Response;
      try {
        response = await this.fetch(url, this.init(request, url));
      } catch (cause) {
        const message = `${describe(info)} failed: ${this.oneLine(errorText(cause))}`;
        const error = new ForgeNetworkError(info, message, { cause });
        if (!idempotent || last) throw error;
        await this.sleep(backoffDelay(attempt, this.backoff, this.random));
        continue;
      }
      this.options.observe?.({ method: request.method, status: response.status, headers: response.headers });
      if (request.method === "GET" && this.options.conditional) {
        const answered = await this.conditionally(url, response);
        if (answered) return { response: answered, info };
      }
      if (response.ok) return { response, info };

      const now = this.now();
      const rateLimited =
        isRateLimited(response.status, response.headers) || (await secondaryLimitMessage(response));
      // GitHub: a secondary limit that names no wait asks for a minute.
      const asked = requestedWaitMs(response.headers, now) ?? (rateLimited ? UNNAMED_WAIT_MS : undefined);
      if (rateLimited && pacer) {
        const until = now + (asked ?? UNNAMED_WAIT_MS);
        await pacer.refused(until);
        throw new ForgeRateLimitError(
          info,
          response.status,
          await this.forgeMessage(response),
          until,
          until - now,
        );
      }
      const transient = rateLimited || response.status >= 500;
      const notActedOn = rateLimited || (response.status === 503 && asked !== undefined);
      if (!transient || !(idempotent || notActedOn)) throw await this.httpError(info, response);

      const wait = asked ?? backoffDelay(attempt, this.backoff, this.random);
      if (wait > this.maxWaitMs || (last && rateLimited)) {
        throw new ForgeRateLimitError(
          info,
          response.status,
          await this.forgeMessage(response),
          now + wait,
          wait,
        );
      }
      if (last) throw await this.httpError(info, response);
      await discard(response);
      await this.sleep(wait);
    }
  }

  /** A 304 answered from the cache; a 200 with an ETag kept for next time. Null: not a conditional answer. */
  private async conditionally(url: string, response: Response): Promise<Response | null> {
    const cache = this.options.conditional;
    if (!cache) return null;
    const cached = cache.get(url);
    const date = response.headers.get("date");
    if (response.status === 304 && cached) return replay(cached, date);
    const etag = response.headers.get("etag");
    if (response.status !== 200 || !etag) return null;
    const body = await response.text();
    const answer = {
      etag,
      body,
      link: response.headers.get("link"),
      total: response.headers.get("x-total-count"),
    };
    cache.put(url, answer);
    return replay(answer, date);
  }

  private init(request: HttpRequest, url: string): RequestInit {
    const cached = request.method === "GET" ? this.options.conditional?.get(url) : undefined;
    const headers: Record<string, string> = {
      ...this.options.headers,
      Accept: request.accept ?? this.options.accept ?? "application/json",
      Authorization: this.options.authorization,
      ...(cached && { "If-None-Match": cached.etag }),
    };
    const init: RequestInit = {
      method: request.method,
      headers,
      signal: AbortSignal.timeout(this.timeoutMs),
    };
    if (request.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(request.body);
    }
    return init;
  }

  private async httpError(info: RequestInfo, response: Response): Promise<ForgeHttpError> {
    return new ForgeHttpError(info, response.status, await this.forgeMessage(response));
  }

  /** The forge's explanation in one line: its JSON `message` (plus details), plain text, or the status text. */
  private async forgeMessage(response: Response): Promise<string> {
    const text = await response.text().catch(() => "");
    let message: string;
    try {
      message = messageFromJson(JSON.parse(text));
    } catch {
      const type = response.headers.get("content-type") ?? "";
      message = type.includes("html") ? "" : text;
    }
    return this.oneLine(message || response.statusText);
  }

  private oneLine(text: string, limit = MESSAGE_LIMIT): string {
    const flat = this.redact(text).replace(/\s+/g, " ").trim();
    return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
  }

  private redact(text: string): string {
    const token = this.options.token;
    return token ? text.split(token).join("[redacted]") : text;
  }
}

function toSearch(query: HttpRequest["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const search = params.toString();
  return search ? `?${search}` : "";
}

/** GitHub: `{message, errors: [{message} | {code, field} | string]}`; Gitea: `{message}` or `[{message}]`. */
function messageFromJson(value: unknown): string {
  if (Array.isArray(value)) return value.map(detail).filter(Boolean).join("; ");
  if (!isRecord(value)) return "";
  const head = typeof value.message === "string" ? value.message : "";
  const details = Array.isArray(value.errors) ? value.errors.map(detail).filter(Boolean) : [];
  return [head, details.join("; ")].filter(Boolean).join(": ");
}

function detail(item: unknown): string {
  if (typeof item === "string") return item;
  if (!isRecord(item)) return "";
  if (typeof item.message === "string" && item.message) return item.message;
  return [item.field, item.code].filter((part) => typeof part === "string").join(" ");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function formatIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.map(String).join(".") || "(root)";
    return `at ${path}: ${issue.message}`;
  });
  const more = error.issues.length - shown.length;
  return shown.join("; ") + (more > 0 ? ` (and ${more} more)` : "");
}

function errorText(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // undici hides the useful part ("ECONNREFUSED", "other side closed") in `cause`.
  const inner = cause.cause instanceof Error ? ` (${cause.cause.message})` : "";
  return `${cause.name}: ${cause.message}${inner}`;
}

/** GitHub's 403 for a secondary rate limit may carry neither header; its message says so. */
async function secondaryLimitMessage(response: Response): Promise<boolean> {
  if (response.status !== 403) return false;
  const text = await response
    .clone()
    .text()
    .catch(() => "");
  return /rate limit/i.test(text);
}

/** The kept answer, with the `Date` of the answer just received: the forge's clock is read from it. */
function replay(answer: CachedAnswer, date: string | null): Response {
  const headers = new Headers({ etag: answer.etag });
  if (date !== null) headers.set("date", date);
  if (answer.link !== null) headers.set("link", answer.link);
  if (answer.total !== null) headers.set("x-total-count", answer.total);
  return new Response(answer.body, { status: 200, headers });
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}

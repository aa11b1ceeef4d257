/**
 * Errors thrown by the forge clients. Every message is one line and names the forge, the method and the path;
 * the http layer redacts the token from every message before constructing these.
 */

export interface RequestInfo {
  /** "github", "gitea" or "forgejo". */
  forge: string;
  method: string;
  /** Path and query relative to the API base, e.g. `/repos/o/r/issues?page=2`. */
  path: string;
}

export class ForgeError extends Error {
  override name = "ForgeError";
  readonly forge: string;
  readonly method: string;
  readonly path: string;

  constructor(info: RequestInfo, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.forge = info.forge;
    this.method = info.method;
    this.path = info.path;
  }
}

/** The forge answered with a non-2xx status that was not (or no longer) worth retrying. */
export class ForgeHttpError extends ForgeError {
  override name = "ForgeHttpError";
  readonly status: number;
  /** The forge's own one-line explanation (may be empty). */
  readonly forgeMessage: string;

  constructor(info: RequestInfo, status: number, forgeMessage: string, message?: string) {
    super(info, message ?? `${describe(info)} returned ${status}${forgeMessage ? `: ${forgeMessage}` : ""}`);
    this.status = status;
    this.forgeMessage = forgeMessage;
  }
}

/** Rate limited, or told to come back later (Retry-After), for longer than the client is willing to wait. */
export class ForgeRateLimitError extends ForgeHttpError {
  override name = "ForgeRateLimitError";
  /** Epoch milliseconds after which a retry may succeed. */
  readonly retryAt: number;

  constructor(info: RequestInfo, status: number, forgeMessage: string, retryAt: number, waitMs: number) {
    const when = new Date(retryAt).toISOString();
    const seconds = Math.ceil(waitMs / 1000);
    const reason = forgeMessage ? `: ${forgeMessage}` : "";
    super(
      info,
      status,
      forgeMessage,
      `${describe(info)} returned ${status}${reason}; retry after ${when} (in ${seconds} s)`,
    );
    this.retryAt = retryAt;
  }
}

/** Not sent: the token's pacer says this write must wait until `retryAt` (src/domain/forge-pacing.ts). */
export class ForgePacingWait extends ForgeError {
  override name = "ForgePacingWait";
  /** Epoch milliseconds from which the write may be asked for again. */
  readonly retryAt: number;

  constructor(info: RequestInfo, retryAt: number) {
    super(info, `${describe(info)}: paced, the token's writes wait until ${new Date(retryAt).toISOString()}`);
    this.retryAt = retryAt;
  }
}

/** No HTTP answer at all (connection failure, reset, timeout). */
export class ForgeNetworkError extends ForgeError {
  override name = "ForgeNetworkError";
}

/** The forge answered 2xx but the body does not have the expected shape. */
export class ForgeSchemaError extends ForgeError {
  override name = "ForgeSchemaError";
}

export function describe(info: RequestInfo): string {
  return `${info.forge}: ${info.method} ${info.path}`;
}

export function hasStatus(error: unknown, ...statuses: number[]): error is ForgeHttpError {
  return error instanceof ForgeHttpError && statuses.includes(error.status);
}

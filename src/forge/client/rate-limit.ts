/** Reading "wait before retrying" hints from response headers. Pure: `now` is passed in. */

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date. */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its month; without this, V8 would read "-5" as the year -5.
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

// Above this, `x-ratelimit-reset` is an epoch (GitHub); below, seconds from now (some proxies in front of Gitea).
const EPOCH_THRESHOLD_SECONDS = 1_000_000_000;

/** Time until the rate-limit window resets, if the quota is spent (`x-ratelimit-remaining: 0`). */
export function rateLimitResetMs(headers: Headers, now: number): number | undefined {
  if (headers.get("x-ratelimit-remaining")?.trim() !== "0") return undefined;
  const reset = Number(headers.get("x-ratelimit-reset")?.trim());
  if (!Number.isFinite(reset) || reset < 0) return undefined;
  if (reset < EPOCH_THRESHOLD_SECONDS) return reset * 1000;
  return Math.max(0, reset * 1000 - now);
}

/** 429, or GitHub's way of saying the same with 403 (primary quota spent, or a secondary limit). */
export function isRateLimited(status: number, headers: Headers): boolean {
  if (status === 429) return true;
  if (status !== 403) return false;
  return headers.get("x-ratelimit-remaining")?.trim() === "0" || headers.has("retry-after");
}

/** The wait the forge asked for, if any. */
export function requestedWaitMs(headers: Headers, now: number): number | undefined {
  return retryAfterMs(headers, now) ?? rateLimitResetMs(headers, now);
}

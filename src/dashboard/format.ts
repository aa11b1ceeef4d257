/** How the dashboard and the CLI write times, money, token counts and ratios. */
const DAY_MS = 86_400_000;

export const formatTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;

/** A span of time to the second: `45 s`, `3 min 05 s`, `2 h 07 min`, `3 d 4 h`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, "0");
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${pad(seconds % 60)} s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${pad(Math.floor(seconds / 60) % 60)} min`;
  return `${Math.floor(seconds / 86_400)} d ${Math.floor(seconds / 3600) % 24} h`;
}

/** `MM-DD` of a UTC day number (days since the epoch). */
export const formatDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(5, 10);

/**
 * A moment relative to `now`: `45 s ago`, `3 min ago`, `in 20 s`, `in 2 h`. Self-contained on purpose: the
 * dashboard's script runs this same function's source in the browser to keep the times ticking.
 */
export function relativeTime(at: number, now: number): string {
  const seconds = Math.round((now - at) / 1000);
  const n = Math.abs(seconds);
  const span =
    n < 60
      ? `${n} s`
      : n < 3600
        ? `${Math.floor(n / 60)} min`
        : n < 86_400
          ? `${Math.floor(n / 3600)} h`
          : `${Math.floor(n / 86_400)} d`;
  return seconds < 0 ? `in ${span}` : `${span} ago`;
}

/** `1 finding`, `2 findings`; `many` where adding an s is wrong. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export const formatUsd = (usd: number) => `$${usd.toFixed(2)}`;

export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1)}k`;
  return String(n);
}

export const formatRatio = (ratio: number | null) => (ratio === null ? "–" : `${Math.round(ratio * 100)}%`);

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** 1536 → "1.5 KiB": one decimal below 10 of a unit, none above. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? Math.round(value).toString() : value.toFixed(1);
  return `${shown} ${BYTE_UNITS[unit]}`;
}

/** A project's health in a few words: never "healthy" before a check has run, nor after one failed. */
export function healthHeadline(health: {
  checkedAt: number | null;
  error: string | null;
  findings: readonly unknown[];
}): string {
  const failed = health.error !== null;
  if (health.checkedAt === null) return failed ? "the first check failed" : "not checked yet";
  if (health.findings.length > 0)
    return `${plural(health.findings.length, "finding")}${failed ? " (the last check failed)" : ""}`;
  return failed ? "the last check failed" : "healthy";
}

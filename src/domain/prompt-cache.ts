/**
 * Which prompt-cache lifetime a project's sessions ask for. A session's later rounds (CI red, the critic's
 * findings, a human's reply) resume its transcript; within the cache's lifetime the API reads it back at a
 * tenth of the input price, after it the whole transcript is written again at 1.25 times. A 5-minute entry
 * costs 1.25 times the input price to write, a 1-hour one twice: the hour pays for itself when the next round
 * usually starts after five minutes, which is CI's doing (docs/performance.md, "Prompt cache"). Pure.
 */
export const PROMPT_CACHE_TTLS = ["5m", "1h"] as const;
export type PromptCacheTtl = (typeof PROMPT_CACHE_TTLS)[number];

/** The project's setting: a lifetime, or `auto` (chosen from the project's recent CI waits). */
export const PROMPT_CACHE_SETTINGS = ["auto", ...PROMPT_CACHE_TTLS] as const;
export type PromptCacheSetting = (typeof PROMPT_CACHE_SETTINGS)[number];

/**
 * A CI wait this long or longer starts the next round after a 5-minute entry expired: the critic, the queue
 * and the session's start take the last minute.
 */
export const LONG_CI_WAIT_MS = 4 * 60_000;
/** Fewer CI waits than this say nothing yet: the API's default stands. */
export const MIN_CI_SAMPLES = 3;

/**
 * `auto`: an hour when at least half of the recent CI waits (`ciWaitsMs`, newest first or in any order) were
 * long: each such round then saves rewriting the transcript (1.25 − 0.1 of its size) for 0.75 more on the
 * tokens written, which the transcript outgrows from the second round on.
 */
export function promptCacheTtl(setting: PromptCacheSetting, ciWaitsMs: readonly number[]): PromptCacheTtl {
  if (setting !== "auto") return setting;
  if (ciWaitsMs.length < MIN_CI_SAMPLES) return "5m";
  const long = ciWaitsMs.filter((ms) => ms >= LONG_CI_WAIT_MS).length;
  return long * 2 >= ciWaitsMs.length ? "1h" : "5m";
}

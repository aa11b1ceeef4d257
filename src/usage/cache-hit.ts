/**
 * The prompt cache's share of what sessions read, cache_read / (input + cache_read + cache_write), null with
 * nothing read: the issue page's figure and the outcomes'. Pure.
 */
export function cacheHitRatio(u: { inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }) {
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  return prompt === 0 ? null : u.cacheReadTokens / prompt;
}

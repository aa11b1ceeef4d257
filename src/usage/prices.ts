/**
 * List prices of the Messages API in USD per million tokens. The proxy computes a session's cost from the
 * tokens the API reports, so the budget binds whatever the agent does. A model not listed is charged at the
 * dearest price: an unknown model may overrun the budget's figure, never undercount it.
 */
export type Price = { input: number; output: number };

const PRICES: [RegExp, Price][] = [
  [/opus-4-[5-9]|opus-[5-9]/, { input: 5, output: 25 }],
  [/opus/, { input: 15, output: 75 }],
  [/sonnet/, { input: 3, output: 15 }],
  [/haiku-4|haiku-[5-9]/, { input: 1, output: 5 }],
  [/3-5-haiku/, { input: 0.8, output: 4 }],
  [/haiku/, { input: 0.25, output: 1.25 }],
];
const DEAREST: Price = { input: 15, output: 75 };

/** A 5-minute cache write costs 1.25 times the input price, a 1-hour one twice it, a cache read a tenth. */
export const CACHE_WRITE = 1.25;
export const CACHE_WRITE_1H = 2;
const CACHE_READ = 0.1;

export type Tokens = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** All cache writes, whatever their lifetime. */
  cacheWriteTokens: number;
  /** Of those, the 1-hour ones (the API's `cache_creation.ephemeral_1h_input_tokens`); none when absent. */
  cacheWrite1hTokens?: number;
};

export function priceOf(model: string): Price {
  return PRICES.find(([pattern]) => pattern.test(model))?.[1] ?? DEAREST;
}

export function costUsd(model: string, tokens: Tokens): number {
  const { input, output } = priceOf(model);
  const longWrites = Math.min(tokens.cacheWrite1hTokens ?? 0, tokens.cacheWriteTokens);
  const millionths =
    tokens.inputTokens * input +
    (tokens.cacheWriteTokens - longWrites) * input * CACHE_WRITE +
    longWrites * input * CACHE_WRITE_1H +
    tokens.cacheReadTokens * input * CACHE_READ +
    tokens.outputTokens * output;
  return millionths / 1_000_000;
}

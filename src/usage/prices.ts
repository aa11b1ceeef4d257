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

/** A 5-minute cache write costs 1.25 times the input price, a cache read a tenth of it. */
const CACHE_WRITE = 1.25;
const CACHE_READ = 0.1;

export type Tokens = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
};

export function priceOf(model: string): Price {
  return PRICES.find(([pattern]) => pattern.test(model))?.[1] ?? DEAREST;
}

export function costUsd(model: string, tokens: Tokens): number {
  const { input, output } = priceOf(model);
  const millionths =
    tokens.inputTokens * input +
    tokens.cacheWriteTokens * input * CACHE_WRITE +
    tokens.cacheReadTokens * input * CACHE_READ +
    tokens.outputTokens * output;
  return millionths / 1_000_000;
}

/**
 * How the model proxy holds a session to its budget. Before a request goes upstream it reserves the request's
 * worst case: its input (estimated from its size, at the cache-write price of the session's cache lifetime, the
 * dearest an input token costs)
 * and `max_tokens` at the output price. What is reserved is taken from the budget until the answer settles it
 * to what the API reported; requests in flight are bounded, so parallel requests cannot all pass at spend 0.
 * Where the worst case does not fit but a useful answer does, `max_tokens` is lowered to what the budget
 * still pays for (the answer then stops at that length), so the end of a budget stays usable.
 */
import { CACHE_WRITE, CACHE_WRITE_1H, type Price, priceOf } from "../../src/usage/prices.ts";

/** Request JSON bytes per input token, as the tokenizer averages on code and prose (an estimate). */
const BYTES_PER_TOKEN = 4;
/** Below this many output tokens an answer is not worth asking for: the budget counts as spent. */
export const MIN_OUTPUT_TOKENS = 2_048;
/** Requests of one session upstream at once (Claude Code sends one, two with a side request). */
export const MAX_IN_FLIGHT = 4;

export type Ask = {
  model: string;
  bytes: number;
  maxTokens: number;
  thinkingBudget?: number | undefined;
  /** Its breakpoints write 1-hour cache entries, whose writes cost more than 5-minute ones. */
  longCache?: boolean;
};

export type Admission =
  | {
      kind: "forward";
      reserveUsd: number;
      /** The input's share of it. */
      inputUsd: number;
      /** Set when the request's `max_tokens` (and its thinking budget, if over it) must be lowered. */
      maxTokens?: number;
      thinkingBudget?: number;
    }
  /** Nothing more fits even once what is in flight has settled: the session's budget is spent. */
  | { kind: "spent" }
  /** It fits once requests in flight have settled: try again shortly. */
  | { kind: "busy" };

/** Whether `ask` may go upstream, given what the session spent (settled) and what is reserved in flight. */
export function admit(
  ask: Ask,
  limit: { budgetUsd: number; spentUsd: number; reservedUsd: number },
): Admission {
  const price = priceOf(ask.model);
  const input = inputWorstUsd(ask.bytes, price, ask.longCache ? CACHE_WRITE_1H : CACHE_WRITE);
  const perOutput = price.output / 1_000_000;
  const floor = Math.min(ask.maxTokens, MIN_OUTPUT_TOKENS);
  const settledRoom = limit.budgetUsd - limit.spentUsd;
  if (input + floor * perOutput > settledRoom) return { kind: "spent" };
  const room = settledRoom - limit.reservedUsd;
  const affordable = Math.floor((room - input) / perOutput);
  if (affordable >= ask.maxTokens) {
    return { kind: "forward", reserveUsd: input + ask.maxTokens * perOutput, inputUsd: input };
  }
  if (affordable < floor) return { kind: "busy" };
  // Thinking must stay under max_tokens; `affordable` is at least MIN_OUTPUT_TOKENS here, far above the
  // API's least thinking budget (1 024).
  const over = ask.thinkingBudget !== undefined && ask.thinkingBudget >= affordable;
  return {
    kind: "forward",
    reserveUsd: input + affordable * perOutput,
    inputUsd: input,
    maxTokens: affordable,
    ...(over && { thinkingBudget: affordable - 1 }),
  };
}

function inputWorstUsd(bytes: number, price: Price, cacheWrite: number): number {
  return (Math.ceil(bytes / BYTES_PER_TOKEN) * price.input * cacheWrite) / 1_000_000;
}

/** A session's spend: what settled, and each request in flight's reservation against what it metered so far. */
export class SpendLedger {
  readonly budgetUsd: number;
  #spent = 0;
  readonly #flight = new Map<number, { reserve: number; metered: number }>();
  #next = 0;

  constructor(budgetUsd: number) {
    this.budgetUsd = budgetUsd;
  }

  get spentUsd(): number {
    return this.#spent;
  }

  get inFlight(): number {
    return this.#flight.size;
  }

  /** Admits `ask` and reserves for it; the id settles it. */
  admit(ask: Ask): { admission: Admission; id?: number } {
    if (this.#flight.size >= MAX_IN_FLIGHT) return { admission: { kind: "busy" } };
    let reserved = 0;
    for (const { reserve, metered } of this.#flight.values()) reserved += Math.max(reserve, metered);
    const admission = admit(ask, { budgetUsd: this.budgetUsd, spentUsd: this.#spent, reservedUsd: reserved });
    if (admission.kind !== "forward") return { admission };
    const id = this.#next++;
    this.#flight.set(id, { reserve: admission.reserveUsd, metered: 0 });
    return { admission, id };
  }

  /** What the request's answer metered so far: it holds the budget past its reservation, if it came to that. */
  meter(id: number, usd: number): void {
    const entry = this.#flight.get(id);
    if (entry) entry.metered = usd;
  }

  /** The request is over (answered, refused upstream, or abandoned): its metered cost is spent. */
  settle(id: number, usd: number): void {
    if (!this.#flight.delete(id)) return;
    this.#spent += usd;
  }
}

import { z } from "zod";
import { costUsd, type Tokens } from "../../src/usage/prices.ts";

/**
 * What one Messages API response cost, read from the API's own answer: the JSON body's `usage`, or for a
 * stream, `message_start`'s usage completed by the last `message_delta` (whose counts are cumulative). A
 * stream cut before its final `message_delta` (the client went away, and the proxy cancelled upstream) is
 * metered as far as it came: the input `message_start` reported, and the output it streamed, estimated from
 * the content deltas' size.
 */
export type Metered = Tokens & { model: string; usd: number };

const usageSchema = z.looseObject({
  input_tokens: z.number().int().min(0).nullish(),
  output_tokens: z.number().int().min(0).nullish(),
  cache_read_input_tokens: z.number().int().min(0).nullish(),
  cache_creation_input_tokens: z.number().int().min(0).nullish(),
  /** The writes by lifetime: 1-hour ones cost more. */
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: z.number().int().min(0).nullish() }).nullish(),
});
type ApiUsage = z.infer<typeof usageSchema>;

const messageSchema = z.looseObject({ model: z.string().optional(), usage: usageSchema.optional() });
const eventSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: messageSchema }),
  z.looseObject({ type: z.literal("message_delta"), usage: usageSchema.optional() }),
  z.looseObject({
    type: z.literal("content_block_delta"),
    delta: z.looseObject({
      text: z.string().optional(),
      partial_json: z.string().optional(),
      thinking: z.string().optional(),
    }),
  }),
]);

/** Streamed output bytes per token, on the high side (prose averages about 4): an estimate errs over. */
const STREAMED_BYTES_PER_TOKEN = 3;

const ZERO: Tokens = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
};

/** Takes a streamed response's bytes as they pass; `result()` is what was metered so far. */
export class StreamMeter {
  readonly #decoder = new TextDecoder();
  #pending = "";
  #model: string;
  #tokens: Tokens = { ...ZERO };
  #streamedBytes = 0;
  /** Whether the final `message_delta` reported the output. */
  #final = false;
  #started = false;

  /** `model`: the request's, until the response names its own. */
  constructor(model: string) {
    this.#model = model;
  }

  write(chunk: Uint8Array): void {
    this.#pending += this.#decoder.decode(chunk, { stream: true });
    const events = this.#pending.split(/\r?\n\r?\n/);
    this.#pending = events.pop() ?? "";
    for (const event of events) this.#event(event);
  }

  /** Whether `message_start` came: the API reported what the input cost. */
  get started(): boolean {
    return this.#started;
  }

  /** At the end of the stream (or where it was cut): what it cost. */
  result(): Metered {
    if (this.#pending.trim() !== "") {
      this.#event(this.#pending);
      this.#pending = "";
    }
    return this.current();
  }

  /** What the events so far metered. */
  current(): Metered {
    if (this.#final) return metered(this.#model, this.#tokens);
    const streamed = Math.ceil(this.#streamedBytes / STREAMED_BYTES_PER_TOKEN);
    return metered(this.#model, {
      ...this.#tokens,
      outputTokens: Math.max(this.#tokens.outputTokens, streamed),
    });
  }

  #event(text: string): void {
    const data = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (data === "") return;
    const parsed = eventSchema.safeParse(parseJson(data));
    if (!parsed.success) return;
    const event = parsed.data;
    if (event.type === "message_start") {
      this.#started = true;
      if (event.message.model) this.#model = event.message.model;
      this.#tokens = merge(ZERO, event.message.usage);
    } else if (event.type === "content_block_delta") {
      const { text = "", partial_json = "", thinking = "" } = event.delta;
      this.#streamedBytes += Buffer.byteLength(text + partial_json + thinking);
    } else {
      this.#tokens = merge(this.#tokens, event.usage);
      if (event.usage?.output_tokens != null) this.#final = true;
    }
  }
}

/** A non-streamed response's body. */
export function meterBody(model: string, body: string): Metered {
  const parsed = messageSchema.safeParse(parseJson(body));
  if (!parsed.success) return metered(model, ZERO);
  return metered(parsed.data.model ?? model, merge(ZERO, parsed.data.usage));
}

/** Counts a later report gives replace earlier ones: the API's counts are running totals within a message. */
function merge(tokens: Tokens, usage: ApiUsage | undefined): Tokens {
  if (!usage) return tokens;
  return {
    inputTokens: usage.input_tokens ?? tokens.inputTokens,
    outputTokens: usage.output_tokens ?? tokens.outputTokens,
    cacheReadTokens: usage.cache_read_input_tokens ?? tokens.cacheReadTokens,
    cacheWriteTokens: usage.cache_creation_input_tokens ?? tokens.cacheWriteTokens,
    cacheWrite1hTokens: usage.cache_creation?.ephemeral_1h_input_tokens ?? tokens.cacheWrite1hTokens ?? 0,
  };
}

function metered(model: string, tokens: Tokens): Metered {
  return { model, ...tokens, usd: costUsd(model, tokens) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

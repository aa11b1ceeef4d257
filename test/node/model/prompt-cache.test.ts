import { describe, expect, it } from "vitest";
import {
  type CacheOutcome,
  type CacheUsage,
  FIVE_MINUTES_MS,
  minimumCacheable,
  ONE_HOUR_MS,
  PromptCache,
} from "../../support/model/prompt-cache.ts";
import { startModelStandIn } from "../../support/model/server.ts";

// A text block of `n` tokens as the stand-in counts them (characters / 4 of the block's JSON).
const words = (n: number, tag = "a") => tag.repeat(n * 4 - `{"type":"text","text":""}`.length);
const block = (n: number, tag?: string, cacheControl?: object) => ({
  type: "text",
  text: words(n, tag),
  ...(cacheControl && { cache_control: cacheControl }),
});
const EPHEMERAL = { type: "ephemeral" };
const HOUR = { type: "ephemeral", ttl: "1h" };

/** A conversation of user blocks, one of 2 000 tokens then `turns` of 10, the last one a breakpoint. */
function conversation(
  turns: number,
  { model = "claude-sonnet-4-5", last = EPHEMERAL as object | null } = {},
) {
  const blocks = [block(2_000, "s"), ...Array.from({ length: turns }, (_, i) => block(10, String(i % 10)))];
  const tail = blocks.at(-1);
  if (tail && last) Object.assign(tail, { cache_control: last });
  return { model, messages: [{ role: "user", content: blocks }] };
}

function usage(outcome: CacheOutcome): CacheUsage {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.usage;
}

function clock() {
  let now = 1_000_000;
  return { now: () => now, pass: (ms: number) => (now += ms) };
}

describe("the stand-in's prompt cache", () => {
  it("counts a request without breakpoints as plain input", () => {
    const cache = new PromptCache();
    const body = { model: "m", messages: [{ role: "user", content: [block(2_000)] }] };
    for (let i = 0; i < 2; i++) {
      expect(usage(cache.use(body))).toMatchObject({
        input_tokens: 2_000,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      });
    }
  });

  it("writes the prefix up to a breakpoint, reads it next time, and leaves what follows as input", () => {
    const cache = new PromptCache();
    const body = (question: string) => ({
      model: "claude-sonnet-4-5",
      system: [block(1_500, "s", EPHEMERAL)],
      messages: [{ role: "user", content: [block(20, question)] }],
    });
    expect(usage(cache.use(body("q")))).toEqual({
      input_tokens: 20,
      cache_creation_input_tokens: 1_500,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 1_500, ephemeral_1h_input_tokens: 0 },
    });
    expect(usage(cache.use(body("r")))).toMatchObject({
      input_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1_500,
    });
  });

  it("caches no prefix shorter than the model's minimum", () => {
    expect(minimumCacheable("claude-opus-5-5")).toBe(512);
    expect(minimumCacheable("claude-opus-4-5-20251101")).toBe(4_096);
    expect(minimumCacheable("claude-sonnet-4-5")).toBe(1_024);
    const cache = new PromptCache();
    const short = {
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: [block(900, "x", EPHEMERAL)] }],
    };
    for (let i = 0; i < 2; i++) {
      expect(usage(cache.use(short))).toMatchObject({ input_tokens: 900, cache_read_input_tokens: 0 });
    }
    const opus = { ...short, model: "claude-opus-5-5" };
    usage(cache.use(opus));
    expect(usage(cache.use(opus))).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 900 });
  });

  it("finds the earlier breakpoint within 20 blocks before the new one, not further", () => {
    const cache = new PromptCache();
    usage(cache.use(conversation(5)));
    // The breakpoint moved 20 blocks on: the entry at its old place is found.
    expect(usage(cache.use(conversation(25)))).toMatchObject({
      cache_read_input_tokens: 2_050,
      cache_creation_input_tokens: 200,
    });
    // 21 blocks on: out of reach, the whole prefix is written again.
    expect(usage(cache.use(conversation(46)))).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 2_460,
    });
  });

  it("keeps an entry 5 minutes from its last use", () => {
    const time = clock();
    const cache = new PromptCache(time.now);
    usage(cache.use(conversation(1)));
    time.pass(4 * 60_000);
    expect(usage(cache.use(conversation(1))).cache_read_input_tokens).toBe(2_010);
    // 8 minutes after the write, 4 after the hit that refreshed it.
    time.pass(4 * 60_000);
    expect(usage(cache.use(conversation(1))).cache_read_input_tokens).toBe(2_010);
    time.pass(FIVE_MINUTES_MS);
    expect(usage(cache.use(conversation(1)))).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 2_010,
    });
  });

  it("keeps a 1-hour entry for the hour and charges its writes as 1-hour ones", () => {
    const time = clock();
    const cache = new PromptCache(time.now);
    expect(usage(cache.use(conversation(1, { last: HOUR }))).cache_creation).toEqual({
      ephemeral_5m_input_tokens: 0,
      ephemeral_1h_input_tokens: 2_010,
    });
    time.pass(59 * 60_000);
    expect(usage(cache.use(conversation(1, { last: HOUR }))).cache_read_input_tokens).toBe(2_010);
    time.pass(ONE_HOUR_MS);
    expect(usage(cache.use(conversation(1, { last: HOUR }))).cache_read_input_tokens).toBe(0);
  });

  it("charges each span of a write at the lifetime of the breakpoint that ends it", () => {
    const cache = new PromptCache();
    const body = {
      model: "claude-sonnet-4-5",
      system: [block(2_000, "s", HOUR)],
      messages: [{ role: "user", content: [block(300, "q", EPHEMERAL), block(7, "r")] }],
    };
    expect(usage(cache.use(body))).toEqual({
      input_tokens: 7,
      cache_creation_input_tokens: 2_300,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 2_000 },
    });
  });

  it("puts a top-level cache_control's breakpoint on the last block", () => {
    const cache = new PromptCache();
    const body = { ...conversation(3, { last: null }), cache_control: EPHEMERAL };
    usage(cache.use(body));
    expect(usage(cache.use(body))).toMatchObject({ cache_read_input_tokens: 2_030, input_tokens: 0 });
  });

  it("keeps each model's entries apart", () => {
    const cache = new PromptCache();
    usage(cache.use(conversation(1)));
    expect(usage(cache.use(conversation(1, { model: "claude-sonnet-4-6" }))).cache_read_input_tokens).toBe(0);
  });

  it("reads a string content as the text block it stands for", () => {
    const cache = new PromptCache();
    const text = words(1_200);
    const asBlocks = {
      model: "claude-sonnet-4-5",
      messages: [
        { role: "user", content: [{ type: "text", text }] },
        { role: "user", content: [block(50, "b", EPHEMERAL)] },
      ],
    };
    usage(cache.use(asBlocks));
    const asString = { ...asBlocks, messages: [{ role: "user", content: text }, asBlocks.messages[1]] };
    expect(usage(cache.use(asString)).cache_read_input_tokens).toBe(1_250);
  });

  it.each([
    [
      "five breakpoints",
      { system: Array.from({ length: 5 }, () => block(10, "s", EPHEMERAL)) },
      /maximum of 4/,
    ],
    [
      "a 1-hour breakpoint after a 5-minute one",
      { system: [block(10, "s", EPHEMERAL), block(10, "t", HOUR)] },
      /1h/,
    ],
    ["an unknown lifetime", { system: [block(10, "s", { type: "ephemeral", ttl: "10m" })] }, /ttl/],
  ])("refuses %s", (_, body, message) => {
    const outcome = new PromptCache().use({ model: "m", messages: [], ...body });
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? "" : outcome.message).toMatch(message);
  });

  it("answers a refused request with the API's 400 and bills nothing", async () => {
    const standIn = await startModelStandIn({ script: () => ({ content: [{ type: "text", text: "hi" }] }) });
    try {
      const response = await fetch(`${standIn.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "m",
          max_tokens: 10,
          system: Array.from({ length: 5 }, () => block(10, "s", EPHEMERAL)),
          messages: [{ role: "user", content: "hi" }],
        }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        type: "error",
        error: { type: "invalid_request_error" },
      });
      expect(standIn.requests[0]?.billed).toBeUndefined();
    } finally {
      await standIn.close();
    }
  });
});

import { describe, expect, it } from "vitest";
import { meterBody, StreamMeter } from "../../../runner/sandbox/meter.ts";
import { costUsd, priceOf } from "../../../src/usage/prices.ts";

const sse = (events: Record<string, unknown>[]) =>
  events.map((data) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`).join("");

describe("prices", () => {
  it.each([
    ["claude-opus-4-5-20251101", 5, 25],
    ["claude-opus-4-1-20250805", 15, 75],
    ["claude-sonnet-4-5-20250929", 3, 15],
    ["claude-3-7-sonnet-latest", 3, 15],
    ["claude-haiku-4-5", 1, 5],
    ["claude-3-5-haiku-latest", 0.8, 4],
    ["claude-3-haiku-20240307", 0.25, 1.25],
    // Unknown: the dearest, so that a budget is never undercounted.
    ["some-new-model", 15, 75],
  ])("%s costs %d / %d per million input / output tokens", (model, input, output) => {
    expect(priceOf(model)).toEqual({ input, output });
  });

  it("charges 5-minute cache writes at 1.25, 1-hour ones at 2 and cache reads at 0.1 of the input price", () => {
    const tokens = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    expect(costUsd("claude-sonnet-4-5", tokens)).toBeCloseTo(3);
    expect(
      costUsd("claude-sonnet-4-5", { ...tokens, inputTokens: 0, cacheWriteTokens: 1_000_000 }),
    ).toBeCloseTo(3.75);
    expect(
      costUsd("claude-sonnet-4-5", { ...tokens, inputTokens: 0, cacheReadTokens: 1_000_000 }),
    ).toBeCloseTo(0.3);
    expect(
      costUsd("claude-sonnet-4-5", {
        ...tokens,
        inputTokens: 0,
        cacheWriteTokens: 1_000_000,
        cacheWrite1hTokens: 1_000_000,
      }),
    ).toBeCloseTo(6);
    expect(costUsd("claude-sonnet-4-5", { ...tokens, inputTokens: 0, outputTokens: 1_000_000 })).toBeCloseTo(
      15,
    );
  });
});

describe("the stream meter", () => {
  const stream = sse([
    {
      type: "message_start",
      message: {
        model: "claude-sonnet-4-5",
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 2000,
          cache_read_input_tokens: 500,
          output_tokens: 1,
        },
      },
    },
    { type: "ping" },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: 'data: {"usage": 1}' } },
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 40 } },
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 120 } },
    { type: "message_stop" },
  ]);
  const expected = {
    model: "claude-sonnet-4-5",
    inputTokens: 10,
    cacheWriteTokens: 2000,
    cacheReadTokens: 500,
    outputTokens: 120,
  };

  it("reads message_start's usage and the last message_delta's output count", () => {
    const meter = new StreamMeter("requested-model");
    meter.write(new TextEncoder().encode(stream));
    const result = meter.result();
    expect(result).toMatchObject(expected);
    expect(result.usd).toBeCloseTo((10 * 3 + 2000 * 3.75 + 500 * 0.3 + 120 * 15) / 1e6);
  });

  it("gives the same figures however the bytes are cut, even inside a multi-byte character", () => {
    const bytes = new TextEncoder().encode(`${stream.replace("text_delta", "text_delta\\u00e9")}é`);
    for (const size of [1, 3, 7, 64]) {
      const meter = new StreamMeter("requested-model");
      for (let i = 0; i < bytes.length; i += size) meter.write(bytes.subarray(i, i + size));
      expect(meter.result()).toMatchObject(expected);
    }
  });

  it("meters a stream cut before its end as far as it came: output estimated at 3 bytes a token", () => {
    const cut = stream.slice(0, stream.indexOf("event: message_delta"));
    const meter = new StreamMeter("requested-model");
    expect(meter.started).toBe(false);
    meter.write(new TextEncoder().encode(cut));
    expect(meter.started).toBe(true);
    // The delta streamed 18 bytes (`data: {"usage": 1}`): 6 tokens, more than message_start's 1.
    expect(meter.current()).toMatchObject({ ...expected, outputTokens: 6 });
    expect(meter.result()).toMatchObject({ ...expected, outputTokens: 6 });
  });

  it("keeps the request's model and zero usage for a stream that says nothing", () => {
    const meter = new StreamMeter("claude-haiku-4-5");
    meter.write(new TextEncoder().encode("event: ping\ndata: not json\n\n"));
    expect(meter.result()).toEqual({
      model: "claude-haiku-4-5",
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      usd: 0,
    });
  });

  it("charges the 1-hour share of the cache writes at twice the input price", () => {
    const body = JSON.stringify({
      model: "claude-sonnet-4-5",
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 3000,
        cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      },
    });
    expect(meterBody("x", body)).toMatchObject({ cacheWriteTokens: 3000, cacheWrite1hTokens: 2000 });
    expect(meterBody("x", body).usd).toBeCloseTo((1000 * 3.75 + 2000 * 6) / 1e6);
  });

  it("meters a JSON body", () => {
    const body = JSON.stringify({
      model: "claude-opus-4-5",
      usage: { input_tokens: 1000, output_tokens: 100 },
    });
    expect(meterBody("x", body)).toMatchObject({
      model: "claude-opus-4-5",
      inputTokens: 1000,
      outputTokens: 100,
    });
    expect(meterBody("x", body).usd).toBeCloseTo((1000 * 5 + 100 * 25) / 1e6);
    expect(meterBody("x", "oops").usd).toBe(0);
  });
});

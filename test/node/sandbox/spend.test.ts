/** The model proxy's budget decisions (runner/sandbox/spend.ts) and its request allowlist (request-shape.ts). */
import { describe, expect, it } from "vitest";
import { allowedBetas, shapeRequest } from "../../../runner/sandbox/request-shape.ts";
import { admit, MAX_IN_FLIGHT, SpendLedger } from "../../../runner/sandbox/spend.ts";

// Sonnet: $3 / $15 a million; 4 000 request bytes are 1 000 input tokens at the cache-write price ($3.75).
const SONNET = "claude-sonnet-4-5";
const INPUT_USD = 1_000 * 3.75e-6;
const PER_OUTPUT = 15e-6;
const ask = (maxTokens: number, thinkingBudget?: number) => ({
  model: SONNET,
  bytes: 4_000,
  maxTokens,
  thinkingBudget,
});
const limit = (budgetUsd: number, spentUsd = 0, reservedUsd = 0) => ({ budgetUsd, spentUsd, reservedUsd });

describe("admitting a request", () => {
  it("reserves the input at the cache-write price and max_tokens at the output price when they fit", () => {
    const admitted = admit(ask(10_000), limit(1));
    expect(admitted).toEqual({
      kind: "forward",
      reserveUsd: expect.any(Number),
      inputUsd: expect.any(Number),
    });
    if (admitted.kind !== "forward") return;
    expect(admitted.inputUsd).toBeCloseTo(INPUT_USD, 12);
    expect(admitted.reserveUsd).toBeCloseTo(INPUT_USD + 10_000 * PER_OUTPUT, 12);
  });

  it("lowers max_tokens (and a thinking budget over it) to what the budget still pays for", () => {
    const room = 0.1;
    const affordable = Math.floor((room - INPUT_USD) / PER_OUTPUT);
    expect(admit(ask(32_000, 31_999), limit(1, 0.9))).toMatchObject({
      kind: "forward",
      maxTokens: affordable,
      thinkingBudget: affordable - 1,
    });
    expect(admit(ask(32_000, 1_024), limit(1, 0.9))).not.toHaveProperty("thinkingBudget");
  });

  it("is spent when not even a short answer fits what settled, whatever is in flight", () => {
    expect(admit(ask(32_000), limit(1, 1))).toEqual({ kind: "spent" });
    expect(admit(ask(32_000), limit(1, 1 - INPUT_USD - 2_000 * PER_OUTPUT))).toEqual({ kind: "spent" });
    // A request asking for little needs only that little.
    expect(admit(ask(10), limit(1, 1 - INPUT_USD - 20 * PER_OUTPUT))).toMatchObject({ kind: "forward" });
  });

  it("is busy when it would fit once what is in flight settles", () => {
    expect(admit(ask(32_000), limit(1, 0, 0.99))).toEqual({ kind: "busy" });
  });

  it("charges an unknown model at the dearest price", () => {
    const unknown = admit({ model: "new-model", bytes: 4_000, maxTokens: 1_000 }, limit(10));
    expect(unknown).toMatchObject({ reserveUsd: (1_000 * 15 * 1.25 + 1_000 * 75) / 1e6 });
  });
});

describe("a session's spend ledger", () => {
  it("holds reservations until they settle, bounds requests in flight, and keeps what was metered", () => {
    const ledger = new SpendLedger(1);
    const first = ledger.admit(ask(40_000));
    const second = ledger.admit(ask(40_000));
    expect(first.admission).toEqual({
      kind: "forward",
      reserveUsd: expect.any(Number),
      inputUsd: expect.any(Number),
    });
    // The first holds $0.60: the second gets what is left of the dollar, lowered; a third finds none.
    expect(second.admission).toMatchObject({ kind: "forward", maxTokens: 26_166 });
    expect(ledger.admit(ask(40_000)).admission).toEqual({ kind: "busy" });
    ledger.meter(first.id ?? -1, 0.6);
    ledger.settle(first.id ?? -1, 0.6);
    ledger.settle(second.id ?? -1, 0.3);
    expect(ledger.spentUsd).toBeCloseTo(0.9);
    expect(ledger.inFlight).toBe(0);
    expect(ledger.admit(ask(30_000)).admission).toMatchObject({
      kind: "forward",
      maxTokens: expect.any(Number),
    });

    const many = new SpendLedger(100);
    for (let i = 0; i < MAX_IN_FLIGHT; i++) expect(many.admit(ask(10)).admission.kind).toBe("forward");
    expect(many.admit(ask(10)).admission).toEqual({ kind: "busy" });
  });

  it("counts a request's metered cost past its reservation while it is in flight", () => {
    const ledger = new SpendLedger(1);
    const { id } = ledger.admit(ask(100));
    ledger.meter(id ?? -1, 0.99);
    expect(ledger.admit(ask(30_000)).admission).toEqual({ kind: "busy" });
  });
});

const request = (extra: Record<string, unknown> = {}) => ({
  model: SONNET,
  max_tokens: 100,
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});

describe("the request allowlist", () => {
  it("passes what Claude Code sends", () => {
    const claudeCode = request({
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
      tools: [{ name: "Bash", description: "…", input_schema: { type: "object" }, defer_loading: false }],
      metadata: { user_id: "u" },
      thinking: { type: "adaptive", display: "updates" },
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      output_config: { effort: "medium" },
      stream: true,
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }],
            },
          ],
        },
        { role: "system", content: "environment" },
      ],
    });
    expect(shapeRequest("/v1/messages", claudeCode)).toMatchObject({ ok: true });
    expect(shapeRequest("/v1/messages/count_tokens", { model: SONNET, messages: [] })).toEqual({
      ok: true,
      path: "/v1/messages/count_tokens",
    });
  });

  it.each([
    ["mcp_servers", request({ mcp_servers: [{ type: "url", url: "https://x", name: "x" }] }), /mcp_servers/],
    ["a server tool", request({ tools: [{ type: "web_search_20250305", name: "web_search" }] }), /tools\.0/],
    ["container", request({ container: "c" }), /container/],
    ["an unknown field", request({ service_tier: "priority" }), /service_tier/],
    [
      "an image by URL",
      request({
        messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x" } }] }],
      }),
      /messages\.0\.content/,
    ],
    [
      "a document by Files-API id",
      request({
        messages: [{ role: "user", content: [{ type: "document", source: { type: "file", file_id: "f" } }] }],
      }),
      /messages\.0\.content/,
    ],
    [
      "a server tool's block",
      request({
        messages: [{ role: "assistant", content: [{ type: "server_tool_use", id: "s", name: "web_fetch" }] }],
      }),
      /messages\.0\.content/,
    ],
    [
      "server-side compaction",
      request({ context_management: { edits: [{ type: "compact_20260112" }] } }),
      /edits/,
    ],
    ["no max_tokens", { model: SONNET, messages: [] }, /max_tokens/],
    ["not JSON", undefined, /body/],
  ])("refuses %s", (_what, body, reason) => {
    const shaped = shapeRequest("/v1/messages", body);
    expect(shaped.ok).toBe(false);
    if (!shaped.ok) expect(shaped.reason).toMatch(reason);
  });

  it("keeps only the betas Claude Code sends, and the proxy's own", () => {
    expect(allowedBetas("claude-code-20250219, mcp-client-2025-04-04,files-api-2025-04-14")).toEqual([
      "claude-code-20250219",
    ]);
    expect(allowedBetas(undefined, ["oauth-2025-04-20"])).toEqual(["oauth-2025-04-20"]);
  });
});

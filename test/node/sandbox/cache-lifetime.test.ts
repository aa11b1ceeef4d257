/**
 * The model proxy asks for the project's prompt-cache lifetime: with an hour, every breakpoint of what Claude
 * Code sends goes upstream with `ttl: "1h"`, the API's answer says so, and the proxy meters those writes at
 * twice the input price.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withCacheLifetime } from "../../../runner/sandbox/cache-lifetime.ts";
import { ModelProxy } from "../../../runner/sandbox/model-proxy.ts";
import type { MessagesRequest } from "../../../runner/sandbox/request-shape.ts";
import { text } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";

const MARK = { type: "ephemeral" } as const;
const request: MessagesRequest = {
  model: "claude-sonnet-4-5",
  max_tokens: 100,
  tools: [{ name: "Bash", input_schema: {}, cache_control: MARK }],
  system: [{ type: "text", text: "You are Claude Code. ".repeat(400), cache_control: MARK }],
  messages: [
    { role: "user", content: [{ type: "text", text: "Implement it." }] },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "t1", name: "Bash", input: { cache_control: "x" } }],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content: [{ type: "text", text: "ok", cache_control: MARK }],
        },
      ],
    },
  ],
};

describe("the prompt cache's lifetime in the model proxy", () => {
  it("marks every breakpoint, and nothing else, with an hour", () => {
    const long = withCacheLifetime({ ...request, cache_control: MARK }, "1h");
    const HOUR = { type: "ephemeral", ttl: "1h" };
    expect(long.cache_control).toEqual(HOUR);
    expect(long.tools?.[0]).toMatchObject({ cache_control: HOUR });
    expect(long.system).toMatchObject([{ cache_control: HOUR }]);
    // A tool's input is the model's words, not a breakpoint.
    expect(long.messages[1]?.content).toEqual(request.messages[1]?.content);
    expect(long.messages[2]?.content).toMatchObject([{ content: [{ cache_control: HOUR }] }]);
    expect(withCacheLifetime(request, "5m")).toBe(request);
  });

  let standIn: ModelStandIn;
  beforeAll(async () => {
    standIn = await startModelStandIn({ script: () => text("Done.") });
  });
  afterAll(() => standIn.close());

  it("sends the hour upstream and meters its writes at twice the input price", async () => {
    const usages: { usd: number; cacheWriteTokens: number }[] = [];
    const proxy = await ModelProxy.start(
      {
        upstream: { baseUrl: standIn.url, credential: { apiKey: "key" } },
        sessionToken: "session-token",
        budgetUsd: 5,
        cacheLifetime: "1h",
        onUsage: (usage) => usages.push(usage),
      },
      { port: 0 },
    );
    try {
      const response = await fetch(`${proxy.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": "session-token", "content-type": "application/json" },
        body: JSON.stringify(request),
      });
      expect(response.status).toBe(200);
      const usage = ((await response.json()) as { usage: Record<string, unknown> }).usage;
      const [sent] = standIn.requests.slice(-1);
      expect(JSON.stringify(sent?.body)).not.toContain('"cache_control":{"type":"ephemeral"}');
      const written = usage.cache_creation_input_tokens as number;
      expect(usage.cache_creation).toEqual({
        ephemeral_5m_input_tokens: 0,
        ephemeral_1h_input_tokens: written,
      });
      const output = usage.output_tokens as number;
      const input = usage.input_tokens as number;
      expect(usages.at(-1)?.usd).toBeCloseTo((input * 3 + written * 6 + output * 15) / 1e6, 8);
    } finally {
      await proxy.close();
    }
  });
});

import Anthropic, { OverloadedError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { apiError, text, use } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";

const Verdict = z.object({
  verdict: z.enum(["APPROVE", "REQUEST_CHANGES", "BLOCK"]),
  summary: z.string(),
});

const report: Anthropic.Tool = {
  name: "report",
  description: "Report the review verdict",
  input_schema: z.toJSONSchema(Verdict) as Anthropic.Tool.InputSchema,
};

let standIn: ModelStandIn;
let client: Anthropic;

beforeAll(async () => {
  standIn = await startModelStandIn({
    script: [
      {
        forced: "report",
        steps: [
          (req) =>
            /TODO/.test(req.lastUserText)
              ? use("report", { verdict: "REQUEST_CHANGES", summary: "Leftover TODO." })
              : use("report", { verdict: "APPROVE", summary: "Looks good." }),
        ],
      },
      { when: /overloaded/, steps: [apiError(529, "overloaded_error", "Overloaded")] },
      { when: /hello/, steps: [text("Hello back.")] },
    ],
  });
  client = new Anthropic({ baseURL: standIn.url, apiKey: "test-key", maxRetries: 0 });
});

afterAll(() => standIn.close());

function critic(diff: string) {
  return client.messages.create({
    model: "claude-critic",
    max_tokens: 1024,
    system: "You review diffs.",
    messages: [{ role: "user", content: `Review this diff:\n${diff}` }],
    tools: [report],
    tool_choice: { type: "tool", name: "report" },
  });
}

describe("@anthropic-ai/sdk against the stand-in", () => {
  it("returns the scripted input of a forced tool call as a plain JSON message", async () => {
    const approve = await critic("+ const x = 1;");
    const changes = await critic("+ // TODO remove");

    const block = approve.content[0];
    expect(block?.type === "tool_use" && block.name).toBe("report");
    expect(Verdict.parse(block?.type === "tool_use" ? block.input : undefined).verdict).toBe("APPROVE");
    expect(approve.stop_reason).toBe("tool_use");
    expect(changes.content[0]).toMatchObject({ input: { verdict: "REQUEST_CHANGES" } });
    expect(standIn.requests.at(-1)).toMatchObject({ path: "/v1/messages", query: "" });
    expect(standIn.requests.at(-1)?.body).toMatchObject({ tool_choice: { type: "tool", name: "report" } });
  });

  it("streams SSE that the SDK accumulates, and counts tokens", async () => {
    const stream = client.messages.stream({
      model: "claude-test",
      max_tokens: 100,
      messages: [{ role: "user", content: "hello" }],
    });
    const message = await stream.finalMessage();

    expect(message.content).toMatchObject([{ type: "text", text: "Hello back." }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const count = await client.messages.countTokens({
      model: "claude-test",
      messages: [{ role: "user", content: "hello" }],
    });
    expect(count.input_tokens).toBeGreaterThan(0);
  });

  it("returns scripted API errors in the real error format", async () => {
    const failing = client.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: [{ role: "user", content: "be overloaded" }],
    });

    await expect(failing).rejects.toBeInstanceOf(OverloadedError);
    await expect(failing).rejects.toMatchObject({
      status: 529,
      type: "overloaded_error",
      error: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
  });
});

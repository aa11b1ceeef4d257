import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCritic } from "../../../src/critic/critic.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";

let standIn: ModelStandIn;

beforeAll(async () => {
  // A model that takes the request and never answers.
  standIn = await startModelStandIn({ script: () => new Promise(() => undefined) });
});

afterAll(() => standIn.close());

describe("the critic's deadline", () => {
  it("ends the review unanswered at the deadline, whatever the SDK would retry", async () => {
    const input = {
      repo: "acme/widgets",
      issue: { number: 7, title: "Add --verbose", body: "Print each step." },
      diff: "diff --git a/x b/x\n",
      ci: "green",
      ledger: [],
    };
    const config = { apiKey: "test-key", baseURL: standIn.url, model: "claude-test", deadlineMs: 1_000 };
    // What it spent is kept, answered or not (its usage, charged to the issue).
    expect(await runCritic(config, input)).toMatchObject({
      ok: false,
      reason: "the critic gave no report within 1 s",
      usage: expect.any(Object),
    });
  });
});

/**
 * The Worker critic's model call is spent like a session's: against its issue's budget, in the day's spend
 * (the daily cap) and in D1's usage (the dashboard). Real forge and CI, the Messages-API stand-in as the model.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_CRITIC_MODEL } from "../../durable-objects/issue/effects/review.ts";
import { projectStub } from "../../src/project-stub.ts";
import { costUsd } from "../../src/usage/prices.ts";
import { critic, firstPush, loopProject, report, until } from "./support/review.ts";

describe("model spend outside the runners", () => {
  it("the critic's call is on its issue, in the daily spend that pauses dispatch, and in D1's usage", async () => {
    // A cap the critic's one call reaches: nothing else spends in this test.
    const loop = await loopProject("critic-spend", { dailyBudgetUsd: 0.000_001 });
    const { number } = await firstPush(loop, { "src/parser.ts": "export const parse = 1;\n" });
    const project = projectStub(env, loop.project);
    expect((await project.dispatchStatus()).paused).toBeNull();

    await critic(loop, number, [report("APPROVE", "Good.")]);
    const merged = await until(loop, number, (v) => v.state === "merged");
    await project.drain();

    const rows = await env.DB.prepare(
      `SELECT number, iteration, session_id AS sessionId, source, usd, input_tokens AS input,
        output_tokens AS output, cache_read_tokens AS cacheRead, cache_write_tokens AS cacheWrite
       FROM usage WHERE project_id = ?`,
    )
      .bind(loop.project)
      .all<{ usd: number; input: number; output: number; cacheRead: number; cacheWrite: number }>();
    expect(rows.results).toEqual([
      expect.objectContaining({ number, iteration: merged.iteration, sessionId: "critic", source: "critic" }),
    ]);
    const [row] = rows.results;
    expect(row?.input).toBeGreaterThan(0);
    const tokens = {
      inputTokens: row?.input ?? 0,
      outputTokens: row?.output ?? 0,
      cacheReadTokens: row?.cacheRead ?? 0,
      cacheWriteTokens: row?.cacheWrite ?? 0,
    };
    const usd = costUsd(env.CRITIC_MODEL ?? DEFAULT_CRITIC_MODEL, tokens);
    expect(row?.usd).toBeCloseTo(usd, 10);
    expect(usd).toBeGreaterThan(0);

    expect(await project.issueSpendUsd(number)).toBeCloseTo(usd, 10);
    const status = await project.dispatchStatus();
    expect(status.spentTodayUsd).toBeCloseTo(usd, 10);
    expect(status.paused).toMatch(/^daily budget reached: /);
  });
});

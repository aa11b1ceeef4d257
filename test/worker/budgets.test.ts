import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { projectStub } from "../../src/project-stub.ts";
import { issueCostUsd } from "../../src/usage/cost.ts";
import {
  call,
  claim,
  complete,
  drain,
  heartbeat,
  seedForgeIssue,
  setup,
  taken,
  triaged,
} from "./support/jobs.ts";
import { OPERATOR } from "./support/webhooks.ts";

const usage = (usd: number, turns: number) => ({
  kind: "usage",
  sessionId: "sess-1",
  usage: { inputTokens: 1_000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0, usd, turns },
});

async function started(settings: object) {
  const { project, runners } = await setup("budget", settings, 1);
  const [runner] = runners;
  if (!runner) throw new Error("no runner");
  await seedForgeIssue(project, 1, "Add a flag", "");
  const issue = await triaged(project, 1);
  const claimed = taken(await claim(runner, [project]));
  return { project, runner, issue, claimed };
}

describe("per-issue budgets", () => {
  it("spending the issue's USD budget escalates it and stops the session", async () => {
    const { project, runner, issue, claimed } = await started({ issueBudgetUsd: 1 });
    const res = await call(runner, `jobs/${claimed.job.id}/events`, {
      leaseToken: claimed.leaseToken,
      events: [usage(1.25, 12)],
    });
    expect(res.status).toBe(204);
    await drain(project);
    await issue.drain();
    expect(await issue.view()).toMatchObject({
      state: "escalated",
      reason: "budget exceeded: spent $1.25 of the issue's $1.00",
    });
    expect((await heartbeat(runner, claimed)).cancelled).toBe(true);
  });

  it("the escalation's cost so far is the spend recorded with the usage, before D1 has its copy", async () => {
    const { project, runner, claimed } = await started({});
    // D1's copy of the usage is held back, as a slow or failing D1 would.
    const trigger = `hold_${project.replaceAll("-", "_")}`;
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON usage WHEN NEW.project_id = '${project}' BEGIN SELECT RAISE(ABORT, 'held'); END;`,
    );
    try {
      await call(runner, `jobs/${claimed.job.id}/events`, {
        leaseToken: claimed.leaseToken,
        events: [usage(0.02, 3)],
      });
      await drain(project);
      // What the escalation comment states: the ProjectDO's record, not D1's copy.
      expect(await projectStub(env, project).issueSpendUsd(1)).toBeCloseTo(0.02);
      expect(await issueCostUsd(env, project, 1)).toBe(0);
    } finally {
      await env.DB.exec(`DROP TRIGGER ${trigger}`);
    }
  });

  it("spending the issue's turns escalates it too", async () => {
    const { project, runner, issue, claimed } = await started({ issueTurnBudget: 10 });
    await call(runner, `jobs/${claimed.job.id}/events`, {
      leaseToken: claimed.leaseToken,
      events: [usage(0.1, 10)],
    });
    await drain(project);
    expect((await issue.view())?.reason).toBe("budget exceeded: took 10 of the issue's 10 turns");
  });

  it("a re-sent usage report replaces its figures instead of adding to them", async () => {
    const { project, runner, issue, claimed } = await started({ issueBudgetUsd: 1 });
    for (let i = 0; i < 3; i++) {
      await call(runner, `jobs/${claimed.job.id}/events`, {
        leaseToken: claimed.leaseToken,
        events: [usage(0.6, 5)],
      });
    }
    await drain(project);
    expect((await issue.view())?.state).toBe("running");
  });

  it("the next session gets what the issue has left, carried across iterations", async () => {
    const settings = { issueBudgetUsd: 2, issueTurnBudget: 50, maxTurnsPerSession: 40 };
    const { project, runner, issue, claimed } = await started(settings);
    expect(claimed.job.budget).toEqual({ maxTurns: 40, usdRemaining: 2 });
    await call(runner, `jobs/${claimed.job.id}/events`, {
      leaseToken: claimed.leaseToken,
      events: [
        { kind: "session", sessionId: "sess-1", worktree: "/srv/worktrees/1" },
        usage(0.5, 30),
        { kind: "pushed", branch: "conveyor/1", headSha: "abc1234" },
      ],
    });
    await complete(runner, claimed, { phase: "awaiting_ci" });
    await drain(project);
    await issue.apply({
      id: "ci-red",
      project,
      number: 1,
      cause: { kind: "system", id: "test" },
      event: { type: "ci", result: "red", headSha: "abc1234", excerpt: "1 failed" },
    });
    await issue.drain();
    const revise = taken(await claim(runner, [project]));
    expect(revise.job).toMatchObject({ kind: "revise", instructions: "1 failed", sessionId: "sess-1" });
    expect(revise.job.budget).toEqual({ maxTurns: 20, usdRemaining: 1.5 });
  });
});

describe("the daily cap", () => {
  it("pauses dispatch once today's spend reaches it, and says so in the API", async () => {
    const { project, runner, claimed } = await started({ dailyBudgetUsd: 1, parallel: 5 });
    await call(runner, `jobs/${claimed.job.id}/events`, {
      leaseToken: claimed.leaseToken,
      events: [usage(1.5, 3)],
    });
    await seedForgeIssue(project, 2, "Another", "");
    await triaged(project, 2);
    expect(await claim(runner, [project])).toBeNull();
    const paused = "daily budget reached: $1.50 of $1.00 spent today (UTC)";
    const status = { paused, spentTodayUsd: 1.5, eventRuns: { paused, spentTodayUsd: 0 } };
    expect(await projectStub(env, project).dispatchStatus()).toEqual(status);
    const api = await SELF.fetch(`https://conveyor.test/api/v1/projects/${project}`, { headers: OPERATOR });
    expect(((await api.json()) as { dispatch: unknown }).dispatch).toEqual(status);
  });
});

/**
 * Agent runs that forge events start, through real webhooks, the local forge and the runner API: a sender's
 * rate and one pending run per agent and subject bound what outsiders can start; a captured delivery replayed
 * under a new delivery id starts nothing; a writers-only agent runs for writers only.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { projectStub } from "../../src/project-stub.ts";
import type { Delivery } from "../support/webhook-headers.ts";
import { call, claim, complete, newRunner, taken, triaged } from "./support/jobs.ts";
import { control, forgeUser, type Loop, loopProject } from "./support/review.ts";
import { deliver, pretty } from "./support/webhooks.ts";

const fixture = (path: string) => JSON.parse(env.WEBHOOK_FIXTURES[path] ?? "{}");
const SYNC = fixture("forgejo/pull_request.synchronized.json");
const OPENED = fixture("gitea/issues.opened.json");
const PULL_SYNC: Delivery = {
  forge: "forgejo",
  event: { grouped: "pull_request", type: "pull_request_sync" },
};
const ISSUES: Delivery = { forge: "forgejo", event: { grouped: "issues", type: "issues" } };

const WELCOMER =
  "---\ndescription: Welcomes issues.\non: [issues.opened]\noutputs:\n  comment: { max: 1 }\n---\nWelcome.\n";
const NO_TOKENS = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 };

const person = (login: string) => ({ ...SYNC.sender, login, username: login });

/** A push to `login`'s pull request `pr` as Forgejo delivers it; `push` names the pushed head. */
const synchronized = (loop: Loop, pr: number, login: string, push: number) =>
  pretty({
    ...SYNC,
    number: pr,
    pull_request: {
      ...SYNC.pull_request,
      number: pr,
      title: "Faster startup",
      body: "Caches the config.",
      labels: [],
      user: person(login),
      head: { ...SYNC.pull_request.head, ref: "mallory-patch", sha: push.toString(16).padStart(40, "0") },
      base: { ...SYNC.pull_request.base, ref: "main" },
    },
    repository: { ...SYNC.repository, full_name: loop.repo },
    sender: person(login),
  });

const issueOpened = (loop: Loop, number: number, login: string) =>
  pretty({
    ...OPENED,
    number,
    issue: { ...OPENED.issue, number, title: "Crash", body: "It crashes.", labels: [], user: person(login) },
    repository: { ...OPENED.repository, full_name: loop.repo },
    sender: person(login),
  });

describe("agent runs started by forge events", () => {
  it("150 pushes to an outsider's pull request start one reviewer run", async () => {
    // Reviewed at each push: the flood meets the sender's rate (after CI, one head is one review anyway).
    const loop = await loopProject("event-flood", {
      critic: { reviewHumanPullRequests: true },
      reviews: { people: "on_push" },
    });
    const mallory = await forgeUser(loop, "mallory", "read");
    await control("push", {
      repo: loop.repo,
      branch: "mallory-patch",
      files: { "src/app.ts": "export {};\n" },
    });
    const { number: pr } = await mallory.createPullRequest({
      title: "Faster startup",
      body: "Caches the config.",
      head: "mallory-patch",
      base: "main",
    });
    // Ten at a time, as a forge with several workers delivers them.
    for (let batch = 0; batch < 15; batch++) {
      const pushes = Array.from({ length: 10 }, (_, i) => batch * 10 + i + 1);
      const sent = pushes.map((push) =>
        deliver(loop.project, PULL_SYNC, synchronized(loop, pr, "mallory", push)),
      );
      for (const res of await Promise.all(sent)) expect(res.status).toBe(202);
    }
    const runs = await projectStub(env, loop.project).recentAgentRuns("reviewer", 200);
    // Five in the hour (eventRuns.perSenderPerHour), each superseding the one before it while it waited.
    expect(runs).toHaveLength(5);
    const [latest, ...superseded] = runs;
    expect(latest?.status).toBe("queued");
    for (const run of superseded) expect(run.error).toMatch(/^superseded by run_/);

    const runner = await newRunner("event-flood");
    const review = taken(await claim(runner, [loop.project]));
    expect(review.job.agent).toMatchObject({ name: "reviewer", runId: latest?.id });
    expect(await claim(runner, [loop.project])).toBeNull();
  });

  it("a captured delivery replayed under a new delivery id starts nothing", async () => {
    const loop = await loopProject("event-replay");
    await control("push", {
      repo: loop.repo,
      branch: "main",
      files: { ".conveyor/agents/welcomer.md": WELCOMER },
    });
    const { number } = await (await forgeUser(loop, "someone", "read")).createIssue({
      title: "Crash",
      body: "It crashes.",
      labels: [],
    });
    const captured = issueOpened(loop, number, "someone");
    expect((await deliver(loop.project, ISSUES, captured)).status).toBe(202);
    const replay = await deliver(loop.project, ISSUES, captured, { deliveryId: crypto.randomUUID() });
    expect(await replay.json()).toEqual({ duplicate: true, outcome: "processed" });
    expect(await projectStub(env, loop.project).recentAgentRuns("welcomer")).toHaveLength(1);
  });

  it("event runs spend a daily budget of their own: past it none starts, and issue sessions go on", async () => {
    const settings = { dailyBudgetUsd: 1, eventRuns: { dailyBudgetUsd: 1 } };
    const loop = await loopProject("event-budget", settings);
    await control("push", {
      repo: loop.repo,
      branch: "main",
      files: { ".conveyor/agents/welcomer.md": WELCOMER },
    });
    const someone = await forgeUser(loop, "someone", "read");
    const opened = async () => {
      const { number } = await someone.createIssue({ title: "Crash", body: "It crashes.", labels: [] });
      await deliver(loop.project, ISSUES, issueOpened(loop, number, "someone"));
    };
    await opened();
    const runner = await newRunner("event-budget");
    const run = taken(await claim(runner, [loop.project]));
    expect(run.job.agent?.name).toBe("welcomer");
    await call(runner, `jobs/${run.job.id}/events`, {
      leaseToken: run.leaseToken,
      events: [{ kind: "usage", sessionId: "s", usage: { ...NO_TOKENS, usd: 1.5, turns: 3 } }],
    });
    await complete(runner, run, { phase: "done", outputs: [] });

    await opened();
    const { number } = await loop.forge.createIssue({ title: "Add a flag", body: "", labels: ["backlog"] });
    await triaged(loop.project, number);
    // The project's cap ($1) is not reached by the event run's $1.50: the session starts; the event run waits.
    expect(taken(await claim(runner, [loop.project])).job).toMatchObject({ kind: "implement" });
    expect(await claim(runner, [loop.project])).toBeNull();
    expect(await projectStub(env, loop.project).dispatchStatus()).toEqual({
      paused: null,
      spentTodayUsd: 1.5,
      eventRuns: {
        paused: "event runs' daily budget reached: $1.50 of $1.00 spent today (UTC)",
        spentTodayUsd: 1.5,
      },
    });
  });

  it("an agent triggered by writers only runs for a writer's event, not an outsider's", async () => {
    const loop = await loopProject("event-writers");
    const triager = [
      "---",
      "description: Triages issues writers open.",
      "on: [issues.opened]",
      "triggeredBy: writers",
      "outputs:",
      "  comment: { max: 1 }",
      "---",
      "Triage.",
      "",
    ].join("\n");
    await control("push", {
      repo: loop.repo,
      branch: "main",
      files: { ".conveyor/agents/triager.md": triager },
    });
    await forgeUser(loop, "maintainer", "write");
    const outsider = await (await forgeUser(loop, "visitor", "read")).createIssue({
      title: "a",
      body: "",
      labels: [],
    });
    await deliver(loop.project, ISSUES, issueOpened(loop, outsider.number, "visitor"));
    expect(await projectStub(env, loop.project).recentAgentRuns("triager")).toEqual([]);
    await deliver(loop.project, ISSUES, issueOpened(loop, outsider.number + 1, "maintainer"));
    const runs = await projectStub(env, loop.project).recentAgentRuns("triager");
    expect(runs.map((r) => r.trigger)).toEqual([`issues.opened #${outsider.number + 1}`]);
  });
});

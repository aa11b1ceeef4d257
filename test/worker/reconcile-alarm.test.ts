/**
 * Reconciliation from each project's own Durable Object alarm: the cron only arms it; one project's failing
 * forge leaves the others' cycles alone; webhooks lost on the way are recovered within one cycle, with the
 * quiet cycles around them costing what a quiet cycle costs.
 */
import {
  createExecutionContext,
  createScheduledController,
  env,
  runInDurableObject,
  SELF,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { ESCALATION_HEADLINE } from "../../src/forge/escalation-notice.ts";
import worker from "../../src/index.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import { apiCalls } from "./support/live-project.ts";
import { cycle } from "./support/reconcile.ts";
import { control, firstPush, forgeUser, type Loop, loopProject, services, until } from "./support/review.ts";
import { commentDelivery, OPERATOR } from "./support/webhooks.ts";

const view = (loop: Loop, number: number) => issueStub(env, loop.project, number).view();

/** Polls `done` until it holds (the alarms run on their own schedule). */
async function eventually(done: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function cron() {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController(), env, ctx);
  await waitOnExecutionContext(ctx);
}

/**
 * Lets the issues' own effects (labels, comments) reach the forge, cycles until one is quiet (nothing
 * changed), then measures the next quiet one's charged calls.
 */
async function quietCalls(loop: Loop, numbers: number[]): Promise<number> {
  for (const number of numbers) await issueStub(env, loop.project, number).drain();
  for (let i = 0; i < 5 && (await cycle(loop)).changed > 0; i++);
  await cycle(loop);
  const before = await apiCalls(loop);
  const outcome = await cycle(loop);
  const after = await apiCalls(loop);
  expect(outcome.changed).toBe(0);
  return after.charged - before.charged;
}

/** A commit status posted straight to the forge: its webhook (if any) goes nowhere here. */
async function postStatus(loop: Loop, sha: string, state: "success" | "failure", context: string) {
  const res = await fetch(`${services.forgeApiUrl}/repos/${loop.repo}/statuses/${sha}`, {
    method: "POST",
    headers: { authorization: `token ${services.conveyorToken}`, "content-type": "application/json" },
    body: JSON.stringify({ state, context, description: "external CI" }),
  });
  expect(res.status).toBe(201);
}

describe("reconciliation on each project's alarm", () => {
  it("the cron only arms the alarms; each project's own alarm reconciles it", async () => {
    const one = await loopProject("alarm-one");
    const two = await loopProject("alarm-two");
    const a = await one.forge.createIssue({ title: "Missed one", body: "", labels: ["backlog"] });
    const b = await two.forge.createIssue({ title: "Missed two", body: "", labels: ["backlog"] });
    // Registration armed each a period out; as for projects registered before reconciliation moved here,
    // nothing is armed now, and the cron arms them.
    for (const loop of [one, two]) {
      await runInDurableObject(projectStub(env, loop.project), (_, state) => {
        state.storage.sql.exec("DELETE FROM reconcile_state");
      });
    }
    await cron();
    // Nobody calls for a cycle: the alarms the cron armed run them, each in its project's object.
    await eventually(async () => (await view(one, a.number))?.state === "queued");
    await eventually(async () => (await view(two, b.number))?.state === "queued");
    // The next cycle is about a period away; arming again (the next cron) keeps it there.
    for (const loop of [one, two]) {
      const next = await projectStub(env, loop.project).armReconciliation(loop.project);
      expect(next).toBeGreaterThan(Date.now() + 30_000);
    }
  });

  it("a forge that fails for one project leaves the other's cycle untouched", async () => {
    const good = await loopProject("alarm-good");
    const bad = await loopProject("alarm-bad");
    await env.DB.prepare("UPDATE projects SET api_url = ? WHERE id = ?")
      .bind(`${inject("services").controlUrl}/down/api/v1`, bad.project)
      .run();
    const issue = await good.forge.createIssue({ title: "Works", body: "", labels: ["backlog"] });
    await cron();
    const [failed, passed] = await Promise.all([
      projectStub(env, bad.project).reconcileNow(bad.project),
      projectStub(env, good.project).reconcileNow(good.project),
    ]);
    expect(failed).toMatchObject({ project: bad.project, error: expect.stringContaining("returned 502") });
    expect(passed).toMatchObject({ project: good.project, dispatched: 1 });
    expect((await view(good, issue.number))?.state).toBe("queued");
    // The failing project tries again soon, on its own alarm.
    const retryAt = await projectStub(env, bad.project).armReconciliation(bad.project);
    expect(retryAt).toBeLessThanOrEqual(Date.now() + 60_000);
  });
});

describe("the forge's rate limit", () => {
  it("keeps the reserve for effects: with 10 % left the next cycle waits for the window's reset", async () => {
    const loop = await loopProject("budget-low");
    const login = await loop.forge.getAuthenticatedUser();
    // The whole suite shares this login and its hour's window: start from a full budget.
    await control("rate-limit", { login, used: 0 });
    await cycle(loop);
    const next = await projectStub(env, loop.project).armReconciliation(loop.project);
    expect(next).toBeLessThanOrEqual(Date.now() + 60_000);
    try {
      await control("rate-limit", { login, used: 4_500 });
      await cycle(loop);
      const later = await projectStub(env, loop.project).armReconciliation(loop.project);
      // The stand-in's window resets at the next full hour; the cycle after that, not one period on.
      const reset = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
      expect(later).toBeGreaterThanOrEqual(reset);
    } finally {
      await control("rate-limit", { login, used: 0 });
    }
  });
});

/** An issue escalated after its first session, quiet on the forge, and a maintainer with write access. */
async function escalated(name: string) {
  const loop = await loopProject(name);
  const { number } = await firstPush(loop, { "src/a.ts": "export {};\n" });
  await until(loop, number, (v) => v.state === "awaiting_review");
  await issueStub(env, loop.project, number).apply({
    id: `escalate-${number}`,
    project: loop.project,
    number,
    cause: { kind: "system", id: "test" },
    event: { type: "review_failed", reason: "the critic was unreachable" },
  });
  await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
  expect(await quietCalls(loop, [number])).toBeLessThanOrEqual(2);

  const maintainer = await forgeUser(loop, "maintainer", "write");
  return { loop, number, maintainer };
}

describe("lost webhooks recovered within one cycle", () => {
  it("labeled backlog and a closed dependency, with quiet cycles around them", async () => {
    const loop = await loopProject("lost-issues");
    const dep = await loop.forge.createIssue({ title: "Parser", body: "", labels: [] });
    const cli = await loop.forge.createIssue({
      title: "CLI",
      body: `## Depends on\n- #${dep.number}\n`,
      labels: ["backlog"],
    });
    await cycle(loop);
    expect((await view(loop, cli.number))?.state).toBe("blocked");
    expect(await quietCalls(loop, [cli.number])).toBeLessThanOrEqual(2);

    await loop.forge.closeIssue(dep.number);
    const fresh = await loop.forge.createIssue({ title: "Fresh", body: "", labels: ["backlog"] });
    expect(await cycle(loop)).toMatchObject({ dispatched: 1, regated: 1 });
    expect((await view(loop, cli.number))?.state).toBe("queued");
    expect((await view(loop, fresh.number))?.state).toBe("queued");
    expect(await quietCalls(loop, [cli.number, fresh.number])).toBeLessThanOrEqual(2);
  });

  it("a CI result (commit status) and a closed pull request of live issues", async () => {
    // As "gitea" the Worker trusts CI webhooks and does not poll: a lost one waits for reconciliation.
    const loop = await loopProject(
      "lost-ci",
      { ci: { kind: "woodpecker", contextPattern: "ext/*" } },
      { kind: "gitea" },
    );
    const { number, sha } = await firstPush(loop, { "src/a.ts": "export {};\n" });
    await until(loop, number, (v) => v.outbox.length === 0);
    expect((await view(loop, number))?.state).toBe("awaiting_ci");
    expect(await quietCalls(loop, [number])).toBeLessThanOrEqual(2);

    await postStatus(loop, sha, "success", "ext/ci");
    expect(await cycle(loop)).toMatchObject({ ci: 1 });
    const opened = await until(loop, number, (v) => v.prNumber !== null);
    expect(opened.state).not.toBe("awaiting_ci");

    await loop.forge.updatePullRequest(opened.prNumber ?? 0, { state: "closed" });
    expect(await cycle(loop)).toMatchObject({ pulls: 1 });
    expect(await view(loop, number)).toMatchObject({
      state: "abandoned",
      reason: "pull request closed without merging",
    });
    expect(await cycle(loop)).toMatchObject({ pulls: 0, ci: 0 });
  });

  it("`/conveyor retry` on an escalated issue; the late real webhook changes nothing", async () => {
    const { loop, number, maintainer } = await escalated("lost-retry");
    await maintainer.comment(number, "/conveyor retry");
    expect(await cycle(loop)).toMatchObject({ comments: 1 });
    const retried = await view(loop, number);
    expect(retried?.state).toBe("queued");
    // Once only: the next cycle lists the issue again (it changed) and sends nothing new; neither does the
    // comment's real webhook arriving late.
    await cycle(loop);
    await commentDelivery(loop, number, "maintainer", "/conveyor retry");
    // The lifecycle refuses the webhook's copy: the retry was taken once.
    const applied = (history: { outcome: string }[] = []) => history.filter((h) => h.outcome === "applied");
    const after = await view(loop, number);
    expect(after?.state).toBe("queued");
    expect(applied(after?.history)).toEqual(applied(retried?.history));
    expect(after?.history.at(-1)).toMatchObject({ event: "retry", outcome: "rejected" });
  });

  it("a reply reaches an escalated issue whatever D1's copy says (a lagging state, the Worker's clock)", async () => {
    const { loop, number, maintainer } = await escalated("lost-reply-lag");
    // D1 still says the issue runs, stamped by a Worker clock ten minutes ahead of the forge's.
    await env.DB.prepare(
      "UPDATE issues SET state = 'running', updated_at = ? WHERE project_id = ? AND number = ?",
    )
      .bind(Date.now() + 10 * 60_000, loop.project, number)
      .run();
    await maintainer.comment(number, "Use the v2 endpoint; v1 is gone.");
    expect(await cycle(loop)).toMatchObject({ comments: 1 });
    expect(await view(loop, number)).toMatchObject({ state: "revising", iteration: 2 });
  });

  it("a reply posted before Conveyor's escalation notice landed still counts", async () => {
    // The default retries (0.5 s on): the moments this test's writes land in were set with them; at the suite's
    // 50 ms the escalation's notice can take the pacer's first turn and land before the reply.
    const loop = await loopProject("reply-first", { effects: { retryBaseMs: 500 } });
    const { number } = await firstPush(loop, { "src/a.ts": "export {};\n" });
    // Quiet but for the review it waits for (no critic answer is queued: it fails until the escalation).
    await until(
      loop,
      number,
      (v) => v.state === "awaiting_review" && v.outbox.every((o) => o.channel === "effect:request_review"),
    );
    const maintainer = await forgeUser(loop, "maintainer", "write");
    // Conveyor's writes now go 1.5 s apart (as behind GitHub's pacing): its notice lands seconds late.
    const paced = await SELF.fetch(`http://conveyor.test/api/v1/projects/${loop.project}/settings`, {
      method: "PATCH",
      headers: { ...OPERATOR, "content-type": "application/json" },
      body: JSON.stringify({ key: "forgePacing", value: { creates: [], writeSpacingMs: 1_500 } }),
    });
    expect(paced.status).toBe(200);
    await issueStub(env, loop.project, number).apply({
      id: `escalate-${number}`,
      project: loop.project,
      number,
      cause: { kind: "system", id: "test" },
      event: { type: "review_failed", reason: "the critic was unreachable" },
    });
    // The writer sees the issue escalate (its page, its state) and answers before the notice is on the forge.
    await until(loop, number, (v) => v.state === "escalated");
    await maintainer.comment(number, "Use the v2 endpoint; v1 is gone.");
    await until(loop, number, (v) => v.outbox.length === 0);
    const comments = await maintainer.listComments(number);
    const reply = comments.findIndex((c) => c.body.startsWith("Use the v2 endpoint"));
    const notice = comments.findIndex((c) => c.body.startsWith(ESCALATION_HEADLINE));
    expect(reply).toBeGreaterThanOrEqual(0);
    expect(notice).toBeGreaterThan(reply);
    expect(await cycle(loop)).toMatchObject({ comments: 1 });
    expect(await view(loop, number)).toMatchObject({ state: "revising", iteration: 2 });
  });

  it("a maintainer's reply to an escalated issue resumes its session", async () => {
    const { loop, number, maintainer } = await escalated("lost-reply");
    await maintainer.comment(number, "Use the v2 endpoint; v1 is gone.");
    expect(await cycle(loop)).toMatchObject({ comments: 1 });
    expect(await view(loop, number)).toMatchObject({
      state: "revising",
      iteration: 2,
      sessionId: `sess-${number}`,
    });
  });
});

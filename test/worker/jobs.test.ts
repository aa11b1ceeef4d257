import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { RECORD_DELAY_MS } from "../../durable-objects/project/records.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import { claimAcross } from "../../src/runner-api/claim.ts";
import {
  call,
  cancelJobs,
  claim,
  complete,
  drain,
  enqueue,
  heartbeat,
  issueView,
  jobsOf,
  pastDeadline,
  type Runner,
  seedForgeIssue,
  setup,
  taken,
  triaged,
} from "./support/jobs.ts";
import { freshProject } from "./support/webhooks.ts";

const HEAD = "abc1234";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const implement = (project: string, number: number) =>
  enqueue(
    issueView(project, number, { state: "queued", iteration: 0, sessionId: null, branch: null }),
    "implement",
    `${project}#${number}:1:0`,
  );

async function job(project: string, id: string) {
  const found = (await jobsOf(project)).find((j) => j.id === id);
  if (!found) throw new Error(`no job ${id}`);
  return found;
}

describe("end to end", () => {
  it("IssueDO triage → enqueue_job → ProjectDO → claim → running → complete → awaiting_ci", async () => {
    const {
      project,
      runners: [runner],
    } = await setup("e2e", {}, 1);
    if (!runner) throw new Error("no runner");
    await seedForgeIssue(project, 7, "Add --verbose", "Print each step.");
    const issue = await triaged(project, 7);
    const [queued] = await jobsOf(project);
    expect(queued).toMatchObject({ number: 7, kind: "implement", status: "queued", attempt: 1 });
    // The issue's text is the one it was queued with: an edit while it waited never reaches the session.
    await env.DB.prepare("UPDATE forge_issues SET body = ? WHERE project_id = ? AND number = 7")
      .bind("Print each step, numbered.", project)
      .run();

    const claimed = taken(await claim(runner, [project]));
    expect(claimed.job).toEqual({
      id: queued?.id,
      kind: "implement",
      attempt: 1,
      project,
      issue: { number: 7, title: "Add --verbose", body: "Print each step." },
      repo: {
        fullName: `acme/${project}`,
        cloneUrl: `https://forge.invalid/acme/${project}.git`,
        defaultBranch: "main",
      },
      branch: "conveyor/7",
      headSha: null,
      iteration: 1,
      sessionId: null,
      instructions: null,
      budget: { maxTurns: 100, usdRemaining: 10 },
      // The project's sandbox settings: no registry reachable, no repository Claude settings.
      sandbox: { allowedDomains: [], projectSettings: false },
      promptCacheTtl: "5m",
    });
    // The issue hears of the session once its runner confirms the lease, not at the claim.
    await drain(project);
    expect(await issue.view()).toMatchObject({ state: "queued" });
    await heartbeat(runner, claimed);
    await drain(project);
    const running = await issue.view();
    expect(running).toMatchObject({ state: "running", iteration: 1 });
    expect(running?.history.at(-1)).toMatchObject({
      event: "dispatched",
      eventId: `job:${claimed.job.id}:1:dispatched`,
      cause: { kind: "job", id: claimed.job.id },
    });

    const events = await call(runner, `jobs/${claimed.job.id}/events`, {
      leaseToken: claimed.leaseToken,
      events: [
        { kind: "session", sessionId: "sess-7", worktree: "/srv/worktrees/7" },
        { kind: "pushed", branch: "conveyor/7", headSha: HEAD },
      ],
    });
    expect(events.status).toBe(204);
    // The phase file said awaiting_ci; session and head come from the events the runner sent before.
    expect((await complete(runner, claimed, { phase: "awaiting_ci" })).status).toBe(204);
    await drain(project);
    const waiting = await issue.view();
    expect(waiting).toMatchObject({
      state: "awaiting_ci",
      sessionId: "sess-7",
      branch: "conveyor/7",
      headSha: HEAD,
    });
    expect(waiting?.history.at(-1)).toMatchObject({
      eventId: `job:${claimed.job.id}:complete`,
      event: "phase",
    });

    const row = await env.DB.prepare("SELECT status, attempt, runner_id FROM jobs WHERE id = ?")
      .bind(claimed.job.id)
      .first();
    expect(row).toEqual({ status: "done", attempt: 1, runner_id: runner.runnerId });
    const session = await env.DB.prepare(
      "SELECT project_id, number, runner_id, iteration, worktree FROM worker_sessions WHERE session_id = 'sess-7'",
    ).first();
    expect(session).toEqual({
      project_id: project,
      number: 7,
      runner_id: runner.runnerId,
      iteration: 1,
      worktree: "/srv/worktrees/7",
    });
  });
});

describe("enqueue", () => {
  it("is idempotent under the effect key: a re-delivered effect creates nothing new", async () => {
    const { project } = await setup("idem", {}, 0);
    await implement(project, 1);
    await implement(project, 1);
    expect(await jobsOf(project)).toHaveLength(1);
  });

  it("sends a second's job records to D1 in one write from the alarm; a failed write is retried", async () => {
    const { project } = await setup("enqueue-d1", {}, 0);
    const d1Jobs = async () =>
      (
        await env.DB.prepare("SELECT number, status FROM jobs WHERE project_id = ? ORDER BY number")
          .bind(project)
          .all()
      ).results;
    const stub = projectStub(env, project);
    const alarm = () => runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    const enqueuedAt = Date.now();
    await implement(project, 1);
    await implement(project, 2);
    // The records wait for the alarm, which the first of them armed.
    expect(await d1Jobs()).toEqual([]);
    expect(await alarm()).toBeGreaterThanOrEqual(enqueuedAt + RECORD_DELAY_MS);
    expect(await alarm()).toBeLessThan(enqueuedAt + RECORD_DELAY_MS + 1_000);

    // One batch is one transaction: a failure lands neither, and the alarm stays armed for the retry.
    const trigger = `fail_${project.replaceAll("-", "_")}`;
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON jobs WHEN NEW.project_id = '${project}' AND NEW.number = 2 BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`,
    );
    await sleep(RECORD_DELAY_MS);
    await runDurableObjectAlarm(stub);
    expect(await d1Jobs()).toEqual([]);
    expect(await alarm()).not.toBeNull();

    await env.DB.exec(`DROP TRIGGER ${trigger}`);
    await sleep(800);
    await runDurableObjectAlarm(stub);
    expect(await d1Jobs()).toEqual([
      { number: 1, status: "queued" },
      { number: 2, status: "queued" },
    ]);
  });

  it("throws, to be retried, while the project is not registered", async () => {
    const project = freshProject("unregistered");
    await expect(implement(project, 1)).rejects.toThrow(`project ${project} is not registered`);
  });

  it("the ProjectDO's own claim long-polls until a job arrives", async () => {
    const { project, runners } = await setup("rpc-poll", {}, 1);
    const runner = runners[0] as Runner;
    const waiting = projectStub(env, project).claim(runner.runnerId, [], 5_000);
    await sleep(200);
    await implement(project, 1);
    expect((await waiting)?.job.issue.number).toBe(1);
  });

  it("keeps jobs and leases across eviction", async () => {
    const { project, runners } = await setup("evict", {}, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    await implement(project, 2);
    const claimed = taken(await claim(runner, [project]));
    const before = await jobsOf(project);
    await evictDurableObject(projectStub(env, project));
    expect(await jobsOf(project)).toEqual(before);
    expect((await heartbeat(runner, claimed)).cancelled).toBe(false);
    expect(taken(await claim(runner, [project])).job.issue.number).toBe(2);
  });
});

describe("leases and fencing", () => {
  it("another runner's job → 403, a stale lease → 409, an unknown job → 404; none changes the lease", async () => {
    const {
      project,
      runners: [a, b],
    } = await setup("fence");
    if (!a || !b) throw new Error("no runners");
    await implement(project, 1);
    const claimed = taken(await claim(a, [project]));
    const id = claimed.job.id;
    const before = await job(project, id);
    const paths: [string, object][] = [
      ["heartbeat", {}],
      ["events", { events: [{ kind: "pushed", branch: "x", headSha: HEAD }] }],
      ["complete", { phase: "awaiting_ci", headSha: HEAD }],
      ["fail", { error: "boom", retryable: false }],
    ];
    for (const [path, body] of paths) {
      const other = await call(b, `jobs/${id}/${path}`, { leaseToken: claimed.leaseToken, ...body });
      expect([path, other.status, await other.json()]).toEqual([
        path,
        403,
        { error: `job ${id} is not leased to this runner` },
      ]);
      const stale = await call(a, `jobs/${id}/${path}`, { leaseToken: "lease_stale", ...body });
      expect([path, stale.status, await stale.json()]).toEqual([
        path,
        409,
        { error: `the lease on job ${id} is not current` },
      ]);
    }
    for (const unknown of [`${project}.1.ffffffffffff`, "not-a-job"]) {
      const res = await call(a, `jobs/${unknown}/heartbeat`, { leaseToken: claimed.leaseToken });
      expect([res.status, await res.json()]).toEqual([404, { error: `job ${unknown} is unknown` }]);
    }
    expect(await job(project, id)).toEqual(before);
  });

  it.each([
    ["heartbeat", {}, /^leaseToken: /],
    ["complete", { leaseToken: "t", phase: "finished" }, /^phase: /],
    ["fail", { leaseToken: "t", error: "x" }, /^retryable: /],
    ["events", { leaseToken: "t", events: [] }, /^events: /],
    ["heartbeat", "{not json", /^body must be JSON$/],
  ])("%s with %j → 400", async (path, body, error) => {
    const { project, runners } = await setup("bad-body", {}, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    const claimed = taken(await claim(runner, [project]));
    const res = await call(runner, `jobs/${claimed.job.id}/${path}`, body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(error);
  });

  it("heartbeats extend the lease until the job is finished", async () => {
    const { project, runners } = await setup("beat", {}, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    const claimed = taken(await claim(runner, [project]));
    await sleep(5);
    const beat = await heartbeat(runner, claimed);
    expect(beat.cancelled).toBe(false);
    expect(beat.leaseExpiresAt).toBeGreaterThan(claimed.leaseExpiresAt);
    expect((await job(project, claimed.job.id)).leaseExpiresAt).toBe(beat.leaseExpiresAt);

    expect((await complete(runner, claimed, { phase: "awaiting_ci", headSha: HEAD })).status).toBe(204);
    // Finishing twice under the same lease is harmless (a retried request); the lease itself is over.
    expect((await complete(runner, claimed, { phase: "awaiting_ci", headSha: HEAD })).status).toBe(204);
    const late = await call(runner, `jobs/${claimed.job.id}/heartbeat`, { leaseToken: claimed.leaseToken });
    expect([late.status, await late.json()]).toEqual([409, { error: `job ${claimed.job.id} is done` }]);
  });
});

describe("a late complete", () => {
  it("is accepted under a lease its heartbeats kept, long after the claim's own term", async () => {
    const { project, runners } = await setup("late-complete", { jobs: { confirmMs: 1_000 } }, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    const claimed = taken(await claim(runner, [project]));
    await heartbeat(runner, claimed);
    // Past the claim's short term (the runner retried its complete meanwhile): the lease is still current.
    await sleep(claimed.leaseExpiresAt - Date.now() + 50);
    expect((await complete(runner, claimed, { phase: "awaiting_ci", headSha: HEAD })).status).toBe(204);
    expect(await job(project, claimed.job.id)).toMatchObject({ status: "done" });
  });
});

describe("unconfirmed leases", () => {
  it("a lease nobody confirmed (its answer lost, its runner dead) goes back soon at no attempt's cost", async () => {
    const {
      project,
      runners: [a, b],
    } = await setup("unconfirmed", { jobs: { confirmMs: 5_000 } });
    if (!a || !b) throw new Error("no runners");
    const issue = await triaged(project, 1);
    const lost = taken(await claim(a, [project]));
    // Short until confirmed, and said as a duration: the runner's clock never meets the Worker's.
    expect(lost.leaseMs).toBe(5_000);
    await pastDeadline(project, lost.job.id, "lease_expires_at");
    expect(await job(project, lost.job.id)).toMatchObject({ status: "queued", attempt: 1, affinity: null });
    await drain(project);
    // The issue never heard of a session that never ran.
    expect((await issue.view())?.history.some((h) => h.event === "dispatched")).toBe(false);

    const kept = taken(await claim(b, [project]));
    expect(kept.job).toMatchObject({ id: lost.job.id, attempt: 1 });
    expect((await heartbeat(b, kept)).leaseMs).toBe(60_000);
    await drain(project);
    expect(await issue.view()).toMatchObject({ state: "running" });
    // A confirmed lease that is then lost does cost an attempt.
    await pastDeadline(project, kept.job.id, "lease_expires_at");
    expect(await job(project, kept.job.id)).toMatchObject({ status: "queued", attempt: 2 });
  });

  it("leases nobody confirms, in a row, back off, say so on the issue, and escalate it at the bound", async () => {
    const {
      project,
      runners: [a],
    } = await setup("unconfirmed-streak", { jobs: { confirmMs: 1_000, maxUnconfirmed: 4 } });
    if (!a) throw new Error("no runner");
    const issue = await triaged(project, 1);
    const lose = async () => {
      const lost = taken(await claim(a, [project]));
      await pastDeadline(project, lost.job.id, "lease_expires_at");
      return lost.job.id;
    };
    const id = await lose();
    await lose();
    expect(await job(project, id)).toMatchObject({ status: "queued", unconfirmed: 2, notBefore: 0 });
    await lose();
    // The third in a row: no runner gets it until its backoff ends, and the issue says why.
    const waiting = await job(project, id);
    expect(waiting).toMatchObject({ status: "queued", attempt: 1, unconfirmed: 3 });
    expect(waiting.notBefore - Date.now()).toBeGreaterThan(20_000);
    expect(await claim(a, [project])).toBeNull();
    await drain(project);
    expect(await issue.view()).toMatchObject({
      state: "queued",
      reason: expect.stringMatching(
        new RegExp(
          `^no runner confirmed taking job ${id} 3 times in a row; it is offered again in \\d+ s, then with backoff$`,
        ),
      ),
    });

    // The backoff ends; the fourth is one too many.
    await runInDurableObject(projectStub(env, project), (_instance, state) => {
      state.storage.sql.exec("UPDATE jobs SET not_before = 1 WHERE id = ?", id);
    });
    await lose();
    expect(await job(project, id)).toMatchObject({ status: "failed", unconfirmed: 4 });
    await drain(project);
    const view = await issue.view();
    expect(view).toMatchObject({
      state: "escalated",
      reason: `no runner confirmed taking job ${id} 4 times in a row (jobs.maxUnconfirmed): check the runners' logs, then retry`,
    });
    // Never dispatched, so no session failed: the issue heard only why it waited and why it stopped.
    expect(view?.history.map((h) => h.event).filter((e) => e === "phase" || e === "dispatched")).toEqual([]);
  });

  it("a runner that hung up while its claim waited is not handed the job that comes next", async () => {
    const {
      project,
      runners: [runner],
    } = await setup("hangup", {}, 1);
    if (!runner) throw new Error("no runner");
    const hangUp = new AbortController();
    const waiting = claimAcross(env, runner.runnerId, [], [project], 5_000, hangUp.signal);
    await sleep(200);
    hangUp.abort();
    await implement(project, 1);
    expect(await waiting).toBeNull();
    const [queued] = await jobsOf(project);
    expect(queued).toMatchObject({ status: "queued", attempt: 1, runnerId: null });
  });

  it("a claim that waited leases nothing, so a runner whose hang-up never reached the Worker is not handed a job", async () => {
    const {
      project,
      runners: [runner],
    } = await setup("hangup-unheard", {}, 1);
    if (!runner) throw new Error("no runner");
    // No signal: the runner was killed behind a proxy that does not pass its hang-up on (wrangler dev's).
    const waiting = claimAcross(env, runner.runnerId, [], [project], 5_000);
    await sleep(200);
    await implement(project, 1);
    expect(await waiting).toBeNull();
    const [queued] = await jobsOf(project);
    expect(queued).toMatchObject({ status: "queued", attempt: 1, runnerId: null });
  });
});

describe("lease expiry", () => {
  it("requeues with attempt + 1 for the same runner, fencing off the old lease", async () => {
    const {
      project,
      runners: [a, b],
    } = await setup("expiry");
    if (!a || !b) throw new Error("no runners");
    const issue = await triaged(project, 1);
    const first = taken(await claim(a, [project]));
    await heartbeat(a, first);
    await pastDeadline(project, first.job.id, "lease_expires_at");
    expect(await job(project, first.job.id)).toMatchObject({
      status: "queued",
      attempt: 2,
      affinity: a.runnerId,
      leaseExpiresAt: null,
    });

    const stale = await call(a, `jobs/${first.job.id}/heartbeat`, { leaseToken: first.leaseToken });
    expect(stale.status).toBe(409);
    expect((await complete(a, first, { phase: "awaiting_ci", headSha: HEAD })).status).toBe(409);
    // The runner that holds the worktree gets it back; during the grace period no one else may.
    expect(await claim(b, [project])).toBeNull();
    const second = taken(await claim(a, [project]));
    expect(second.job).toMatchObject({ id: first.job.id, attempt: 2 });
    expect(second.leaseToken).not.toBe(first.leaseToken);
    await heartbeat(a, second);

    await drain(project);
    const view = await issue.view();
    expect(view?.state).toBe("running");
    expect(view?.history.filter((h) => h.event === "dispatched").map((h) => [h.eventId, h.outcome])).toEqual([
      [`job:${first.job.id}:1:dispatched`, "applied"],
      [`job:${first.job.id}:2:dispatched`, "applied"],
    ]);
    const row = await env.DB.prepare("SELECT status, attempt FROM jobs WHERE id = ?")
      .bind(first.job.id)
      .first();
    expect(row).toEqual({ status: "leased", attempt: 2 });
  });

  it("fails the job after the attempts cap; a runner lost on each attempt is retried once, then escalates", async () => {
    const { project, runners } = await setup("cap", { jobs: { maxAttempts: 2 } }, 1);
    const runner = runners[0] as Runner;
    const issue = await triaged(project, 1);
    const expireEach = async () => {
      for (const attempt of [1, 2]) {
        const claimed = taken(await claim(runner, [project]));
        expect(claimed.job.attempt).toBe(attempt);
        await heartbeat(runner, claimed);
        await pastDeadline(project, claimed.job.id, "lease_expires_at");
      }
      await drain(project);
    };
    await expireEach();
    expect(await jobsOf(project)).toContainEqual(expect.objectContaining({ status: "failed", attempt: 2 }));
    // Known to be transient: the issue starts over with a fresh session, once, and says so.
    const reason = "session failed: lease expired on attempt 2 of 2";
    expect(await issue.view()).toMatchObject({
      state: "queued",
      reason: `retried automatically after: ${reason}`,
    });
    await expireEach();
    expect(await issue.view()).toMatchObject({
      state: "escalated",
      reason,
      escalation: { n: 1, cause: "runner_lost", from: "running" },
    });
  });

  it("a retryable failure requeues like an expiry; any other fails the issue's session", async () => {
    const { project, runners } = await setup("fail", {}, 1);
    const runner = runners[0] as Runner;
    const issue = await triaged(project, 1);
    const first = taken(await claim(runner, [project]));
    const retry = await call(runner, `jobs/${first.job.id}/fail`, {
      leaseToken: first.leaseToken,
      error: "fetch timed out",
      retryable: true,
    });
    expect(retry.status).toBe(204);
    expect(await job(project, first.job.id)).toMatchObject({ status: "queued", attempt: 2 });

    const second = taken(await claim(runner, [project]));
    const fatal = await call(runner, `jobs/${second.job.id}/fail`, {
      leaseToken: second.leaseToken,
      error: "disk full",
      retryable: false,
    });
    expect(fatal.status).toBe(204);
    expect(await job(project, first.job.id)).toMatchObject({ status: "failed", attempt: 2 });
    await drain(project);
    expect(await issue.view()).toMatchObject({
      state: "escalated",
      reason: "session failed: runner failed: disk full",
    });
  });
});

describe("cancellation", () => {
  it("drops queued jobs and tells leased ones to stop; their finish is accepted and ignored", async () => {
    const {
      project,
      runners: [a, b],
    } = await setup("cancel", { parallel: 3 });
    if (!a || !b) throw new Error("no runners");
    const issue = await triaged(project, 1);
    const running = taken(await claim(a, [project]));
    await implement(project, 2);

    await cancelJobs(project, 1);
    await cancelJobs(project, 2);
    expect(await heartbeat(a, running)).toMatchObject({ cancelled: true });
    expect(await claim(b, [project])).toBeNull();
    expect((await complete(a, running, { phase: "awaiting_ci", headSha: HEAD })).status).toBe(204);
    expect((await jobsOf(project)).map((j) => [j.number, j.status])).toEqual([
      [2, "cancelled"],
      [1, "cancelled"],
    ]);
    await drain(project);
    // The issue heard that the job started, and nothing of how the cancelled session ended.
    expect((await issue.view())?.history.map((h) => h.event)).toEqual(["triage", "dispatched"]);
  });

  it("a cancelled job holds its slot until its runner lets go", async () => {
    const {
      project,
      runners: [a, b],
    } = await setup("cancel-slot", { parallel: 1 });
    if (!a || !b) throw new Error("no runners");
    await implement(project, 1);
    const running = taken(await claim(a, [project]));
    await cancelJobs(project, 1);
    await implement(project, 2);
    expect(await claim(b, [project])).toBeNull();
    const fail = await call(a, `jobs/${running.job.id}/fail`, {
      leaseToken: running.leaseToken,
      error: "cancelled",
      retryable: false,
    });
    expect(fail.status).toBe(204);
    expect(taken(await claim(b, [project])).job.issue.number).toBe(2);
  });
});

describe("slots", () => {
  it("parallel 2: a third session waits until one completes; an issue waiting for CI holds none", async () => {
    const { project, runners } = await setup("slots", {}, 3);
    const [a, b, c] = runners as [Runner, Runner, Runner];
    for (const n of [1, 2, 3]) await implement(project, n);
    const first = taken(await claim(a, [project]));
    expect(taken(await claim(b, [project])).job.issue.number).toBe(2);
    expect(await claim(c, [project])).toBeNull();

    expect((await complete(a, first, { phase: "awaiting_ci", headSha: HEAD })).status).toBe(204);
    expect(taken(await claim(c, [project])).job.issue.number).toBe(3);
  });

  it("reap needs no slot", async () => {
    const { project, runners } = await setup("reap", { parallel: 1 }, 2);
    const [a, b] = runners as [Runner, Runner];
    await implement(project, 1);
    await enqueue(issueView(project, 9, { state: "merged" }), "reap", `${project}#9:5:3`);
    // Continuations and reaps before fresh work: the reap goes first, then the implement takes the slot.
    expect(taken(await claim(a, [project])).job).toMatchObject({ kind: "reap", issue: { number: 9 } });
    expect(taken(await claim(b, [project])).job).toMatchObject({ kind: "implement" });
    await enqueue(issueView(project, 8, { state: "merged" }), "reap", `${project}#8:5:3`);
    expect(taken(await claim(a, [project])).job).toMatchObject({ kind: "reap", issue: { number: 8 } });
  });
});

describe("an abandonment's reap and a retry", () => {
  it("the reap runs before the retry's session, never after it (it would delete that session's worktree)", async () => {
    const {
      project,
      runners: [a, b],
    } = await setup("reap-then-retry");
    if (!a || !b) throw new Error("no runners");
    const issue = await triaged(project, 1);
    const first = taken(await claim(a, [project]));
    await complete(a, first, { phase: "escalate", reason: "which endpoint?", sessionId: "sess-1" });
    await drain(project);
    const send = (type: "abandon" | "retry") =>
      issue.apply({
        id: type,
        project,
        number: 1,
        cause: { kind: "operator", id: "t" },
        event: { type, by: "op" },
      });
    // Abandoned: its worktree on runner a is reaped, a first; then retried at once: a new implement.
    await send("abandon");
    await send("retry");
    await issue.drain();
    // Newest first.
    expect((await jobsOf(project)).filter((j) => j.status === "queued").map((j) => j.kind)).toEqual([
      "implement",
      "reap",
    ]);
    // Runner b may not take the reap while it waits for a, nor the retry's session ahead of it.
    expect(await claim(b, [project])).toBeNull();
    const reap = (await jobsOf(project)).find((j) => j.kind === "reap");
    await pastDeadline(project, reap?.id ?? "", "affinity_until");
    expect(taken(await claim(b, [project])).job.kind).toBe("reap");
  });
});

describe("claim order and affinity", () => {
  it("continuations before implement, FIFO within", async () => {
    const { project, runners } = await setup("order", { parallel: 4 }, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    await enqueue(issueView(project, 2), "revise", `${project}#2:4:0`, "CI failed");
    await implement(project, 3);
    await enqueue(issueView(project, 4), "resume", `${project}#4:4:0`, "alice: use v2");
    const order = [];
    for (let i = 0; i < 4; i++) {
      const { job } = taken(await claim(runner, [project]));
      order.push([job.kind, job.issue.number]);
    }
    expect(order).toEqual([
      ["revise", 2],
      ["resume", 4],
      ["implement", 1],
      ["implement", 3],
    ]);
  });

  /** Runner a ran #5's implement session; now its revise is queued. */
  async function continuation(name: string) {
    const { project, runners } = await setup(name, {}, 3);
    const [a, b, c] = runners as [Runner, Runner, Runner];
    await implement(project, 5);
    const first = taken(await claim(a, [project]));
    await complete(a, first, { phase: "awaiting_ci", headSha: HEAD, sessionId: "sess-5" });
    await enqueue(
      issueView(project, 5, { sessionId: "sess-5", iteration: 2 }),
      "revise",
      `${project}#5:4:0`,
      "test_flag failed",
    );
    return { project, a, b, c };
  }

  it("a continuation waits for the runner of the issue's previous job", async () => {
    const { project, a, b } = await continuation("affinity");
    expect(await claim(b, [project])).toBeNull();
    expect(taken(await claim(a, [project])).job).toMatchObject({
      kind: "revise",
      // No forge_issues row: the issue's text is empty rather than missing.
      issue: { number: 5, title: "", body: "" },
      sessionId: "sess-5",
      iteration: 2,
      instructions: "test_flag failed",
      branch: "conveyor/5",
    });
  });

  it("a runner holding the issue's worktree may take it during the grace period", async () => {
    const { project, b, c } = await continuation("holding");
    expect(await claim(b, [project], { holding: [`other#5`] })).toBeNull();
    expect(taken(await claim(c, [project], { holding: [`${project}#5`] })).job.kind).toBe("revise");
  });

  it("after the grace period any runner may take it", async () => {
    const { project, b } = await continuation("grace");
    const [queued] = await jobsOf(project);
    await pastDeadline(project, queued?.id ?? "", "affinity_until");
    expect(taken(await claim(b, [project])).job.kind).toBe("revise");
  });

  it("the end of the grace period wakes a waiting claim: its runner's next claim takes the job", async () => {
    const { project, b } = await continuation("grace-wake");
    const [queued] = await jobsOf(project);
    const waiting = claim(b, [project], { waitMs: 5_000 });
    await sleep(200);
    await pastDeadline(project, queued?.id ?? "", "affinity_until");
    expect(await waiting).toBeNull();
    expect(taken(await claim(b, [project])).job.id).toBe(queued?.id);
  });
});

describe("long-poll", () => {
  it("a claim started before the enqueue answers when the job comes; the runner's next claim takes it", async () => {
    const { project, runners } = await setup("poll", {}, 1);
    const runner = runners[0] as Runner;
    const settled = vi.fn();
    const waiting = claim(runner, [project], { waitMs: 5_000 }).finally(settled);
    await sleep(300);
    expect(settled).not.toHaveBeenCalled();
    const started = Date.now();
    await implement(project, 1);
    // Leasing nothing itself: a runner killed while it waited may never be heard hanging up.
    expect(await waiting).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(taken(await claim(runner, [project])).job.issue.number).toBe(1);
  });

  it("waits on several projects at once and takes the job of the one that has it", async () => {
    const { project: one, runners } = await setup("poll-a", {}, 1);
    const { project: two } = await setup("poll-b", {}, 0);
    const runner = runners[0] as Runner;
    const waiting = claim(runner, [one, two], { waitMs: 5_000 });
    await sleep(300);
    await implement(two, 4);
    expect(await waiting).toBeNull();
    expect(taken(await claim(runner, [one, two])).job).toMatchObject({ project: two, issue: { number: 4 } });
    expect(await jobsOf(one)).toEqual([]);
  });

  it("a new job wakes two waiting claims, the longest waiting first, not every one", async () => {
    const { project, runners } = await setup("poll-few", {}, 4);
    const answered: number[] = [];
    const polls: Promise<unknown>[] = [];
    for (const [i, runner] of runners.entries()) {
      polls.push(claim(runner, [project], { waitMs: 5_000 }).then(() => answered.push(i)));
      // In this order at the ProjectDO.
      await sleep(100);
    }
    await sleep(200);
    await implement(project, 1);
    await Promise.all(polls.slice(0, 2));
    // As a runner does, the first claims again and takes it: nothing is left queued to wake anyone for.
    expect(taken(await claim(runners[0] as Runner, [project])).job.issue.number).toBe(1);
    await sleep(500);
    // The other two still wait: with a fleet's hundreds of polls, each job answered them all.
    expect(answered.sort()).toEqual([0, 1]);
    await Promise.all(polls);
  });

  it("answers 204 when nothing comes within waitMs", async () => {
    const { project, runners } = await setup("poll-empty", {}, 1);
    const started = Date.now();
    expect(await claim(runners[0] as Runner, [project], { waitMs: 300 })).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });
});

describe("runner events", () => {
  it("records sessions and usage in D1 (a re-sent usage report replaces the figures)", async () => {
    const { project, runners } = await setup("usage", {}, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    const claimed = taken(await claim(runner, [project]));
    const usage = (usd: number) => ({
      kind: "usage",
      sessionId: "sess-u",
      usage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 30, cacheWriteTokens: 40, usd, turns: 3 },
    });
    for (const events of [
      [{ kind: "session", sessionId: "sess-u", worktree: "/w/1" }, usage(0.5)],
      [usage(0.75)],
    ]) {
      const res = await call(runner, `jobs/${claimed.job.id}/events`, {
        leaseToken: claimed.leaseToken,
        events,
      });
      expect(res.status).toBe(204);
    }
    await drain(project);
    const { results } = await env.DB.prepare(
      "SELECT number, iteration, session_id, input_tokens, cache_read_tokens, usd FROM usage WHERE project_id = ?",
    )
      .bind(project)
      .all();
    expect(results).toEqual([
      { number: 1, iteration: 1, session_id: "sess-u", input_tokens: 10, cache_read_tokens: 30, usd: 0.75 },
    ]);
    expect(await job(project, claimed.job.id)).toMatchObject({ sessionId: "sess-u" });

    // What the issue has spent comes off the next session's budget.
    await complete(runner, claimed, { phase: "awaiting_ci", headSha: HEAD });
    await enqueue(issueView(project, 1, { sessionId: "sess-u" }), "revise", `${project}#1:4:0`, "CI failed");
    expect(taken(await claim(runner, [project])).job.budget).toEqual({ maxTurns: 100, usdRemaining: 9.25 });
  });

  it("keeps what a session is seen doing on its issue, newest last, for the pages watching it", async () => {
    const { project, runners } = await setup("activity", {}, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    const claimed = taken(await claim(runner, [project]));
    const step = (i: number) => ({ at: 1_800_000_000_000 + i, kind: "tool", text: `Bash echo ${i}` });
    const send = (events: object[]) =>
      call(runner, `jobs/${claimed.job.id}/events`, { leaseToken: claimed.leaseToken, events });
    expect((await send([{ kind: "activity", items: [step(1), step(2)] }])).status).toBe(204);
    expect(
      (await send([{ kind: "activity", items: [{ ...step(3), kind: "error", text: "x".repeat(1_001) }] }]))
        .status,
    ).toBe(400);
    expect((await send([{ kind: "activity", items: [step(3)] }])).status).toBe(204);
    const view = await issueStub(env, project, 1).view();
    expect(view?.activity.map((a) => [a.kind, a.text, a.jobId])).toEqual([
      ["tool", "Bash echo 1", claimed.job.id],
      ["tool", "Bash echo 2", claimed.job.id],
      ["tool", "Bash echo 3", claimed.job.id],
    ]);
    // A stale lease's report is refused and kept nowhere.
    const stale = await call(runner, `jobs/${claimed.job.id}/events`, {
      leaseToken: "stale",
      events: [{ kind: "activity", items: [step(4)] }],
    });
    expect(stale.status).toBe(409);
    expect((await issueStub(env, project, 1).view())?.activity).toHaveLength(3);
  });

  it("logs runner lines as structured JSON without secrets", async () => {
    const { project, runners } = await setup("log", {}, 1);
    const runner = runners[0] as Runner;
    await implement(project, 1);
    const claimed = taken(await claim(runner, [project]));
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const message = [
        `push https://conveyor:${runner.token}@forge.invalid/acme/x.git`,
        `lease ${claimed.leaseToken}`,
        "Authorization: Bearer abcdefghijkl",
        "ANTHROPIC_API_KEY=sk-ant-api03-secret",
      ].join("; ");
      const res = await call(runner, `jobs/${claimed.job.id}/events`, {
        leaseToken: claimed.leaseToken,
        events: [{ kind: "log", level: "warn", message }],
      });
      expect(res.status).toBe(204);
      const line = JSON.parse(String(warn.mock.calls[0]?.[0]));
      expect(line).toMatchObject({ msg: "runner log", runner: runner.runnerId, job: claimed.job.id });
      for (const secret of [runner.token, claimed.leaseToken, "abcdefghijkl", "sk-ant-api03-secret"]) {
        expect(line.message).not.toContain(secret);
      }
      expect(line.message).toContain("forge.invalid/acme/x.git");
    } finally {
      warn.mockRestore();
    }
  });
});

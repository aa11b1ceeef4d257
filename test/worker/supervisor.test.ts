/**
 * The supervisor (issue 18) against real parts: runners reporting through the runner API, issues in their
 * IssueDOs with D1 history, the local forge. Time is moved by the data the checks read (a runner's last sight,
 * an issue's entry into its state) and by the project's settings, never by waiting.
 */

import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { deliverSupervisorEffect } from "../../durable-objects/project/supervisor/forge-issues.ts";
import { alertStub } from "../../src/alert-stub.ts";
import type { HealthFinding } from "../../src/contracts/project-object.ts";
import type { AlertMessage } from "../../src/domain/alerts.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import { page, sessionCookie } from "./dashboard-support.ts";
import { call, newRunner, type Runner } from "./support/jobs.ts";
import { apiCalls } from "./support/live-project.ts";
import { backfilled } from "./support/reconcile.ts";
import { control, type Loop, loopProject, send, until } from "./support/review.ts";
import { OPERATOR } from "./support/webhooks.ts";

const BASE = "https://conveyor.test";
const MIN = 60_000;
const GIB = 1024 ** 3;
const HEALTHY_HOST = { memAvailableBytes: 8 * GIB, memTotalBytes: 16 * GIB, load1: 0.5, cpus: 4 };

type Health = { checkedAt: number | null; findings: HealthFinding[] };

async function check(loop: Loop): Promise<Health> {
  const res = await SELF.fetch(`${BASE}/api/v1/projects/${loop.project}/health/check`, {
    method: "POST",
    headers: OPERATOR,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Health;
}

const supervisorIssues = async (loop: Loop) =>
  (await loop.forge.listIssuesByLabel("supervisor", "all")).sort((a, b) => a.number - b.number);

/** The issue's history reaches D1 (its outbox delivers it), as it would within a second. */
const flushed = (loop: Loop, number: number) => issueStub(env, loop.project, number).drain();

describe("the supervisor", () => {
  it("reports a silent runner, a full disk, a stuck issue and a dead letter once each, and closes them when they are gone", async () => {
    const loop = await loopProject("supervised", {
      // A session may last a minute; the supervisor allows a second more before calling the issue stuck.
      timeouts: { session: MIN },
      supervisor: { runnerSilentMs: 5 * MIN, stuckGraceMs: 1_000 },
    });
    const claim = (runner: Runner, body: object) =>
      call(runner, "claim", { waitMs: 0, projects: [loop.project], ...body });

    // Two runners of this project: one goes silent, one reports a nearly full disk.
    const silent = await newRunner("silent", { projects: [loop.project] });
    const full = await newRunner("full", { projects: [loop.project] });
    const nearlyFull = { bytes: 1_000, worktrees: 1, freeBytes: 1 * GIB, totalBytes: 100 * GIB };
    expect((await claim(full, { disk: nearlyFull, host: HEALTHY_HOST })).status).toBe(204);
    await env.DB.prepare("UPDATE runners SET last_seen_at = ? WHERE id = ?")
      .bind(Date.now() - 20 * MIN, silent.runnerId)
      .run();

    // An issue whose session has run far past its minute: its timer did not move it.
    const stuck = await loop.forge.createIssue({ title: "Stuck", body: "x", labels: ["backlog"] });
    await send(loop, stuck.number, { type: "triage", blockers: [] });
    await send(loop, stuck.number, { type: "dispatched", jobId: `job-${stuck.number}`, runnerId: "r" });
    await flushed(loop, stuck.number);
    await env.DB.prepare("UPDATE transitions SET at = at - ? WHERE project_id = ? AND number = ?")
      .bind(60 * MIN, loop.project, stuck.number)
      .run();

    // An issue whose comment the forge refuses for good: the effect goes to the dead letter.
    const refused = await loop.forge.createIssue({ title: "Refused", body: "x", labels: ["backlog"] });
    await send(loop, refused.number, { type: "triage", blockers: [] });
    await send(loop, refused.number, { type: "reply", thread: 99_999, text: "into the void" });
    await until(loop, refused.number, (v) => v.state === "escalated" && v.outbox.length === 0);
    await flushed(loop, refused.number);
    const deadSeq = (await env.DB.prepare(
      "SELECT seq FROM transitions WHERE project_id = ? AND number = ? AND event = 'effect_failed'",
    )
      .bind(loop.project, refused.number)
      .first<number>("seq")) as number;

    const first = await check(loop);
    const expected = [
      `dead_letter:${refused.number}:${deadSeq}`,
      `disk_full:${full.runnerId}`,
      `issue_stuck:${stuck.number}:running`,
      `runner_offline:${silent.runnerId}`,
    ];
    expect(first.findings.map((f) => f.key).sort()).toEqual(expected);
    expect(first.findings.every((f) => f.priority === "P1")).toBe(true);
    expect(first.checkedAt).toEqual(expect.any(Number));

    // One forge issue per finding of the project, labelled supervisor and with its priority, each known to its
    // finding. The runners' findings go to the operator's channel instead (test/worker/alerts.test.ts).
    const opened = await supervisorIssues(loop);
    expect(opened).toHaveLength(2);
    for (const issue of opened) {
      expect(issue.state).toBe("open");
      expect(issue.labels.sort()).toEqual(["P1", "supervisor"]);
    }
    expect(opened.map((i) => i.title).sort()).toEqual(
      [`[P1] dead letter: #${refused.number}`, `[P1] issue stuck: #${stuck.number}`].sort(),
    );
    const health = (await (
      await SELF.fetch(`${BASE}/api/v1/projects/${loop.project}/health`, { headers: OPERATOR })
    ).json()) as Health;
    const forgeIssues = health.findings.map((f) => f.forgeIssue);
    expect(forgeIssues.filter((n) => n !== null).sort()).toEqual(opened.map((i) => i.number).sort());
    expect(forgeIssues.filter((n) => n === null)).toHaveLength(2);

    // The next run finds the same causes: nothing more is opened.
    const second = await check(loop);
    expect(second.findings.map((f) => f.key).sort()).toEqual(expected);
    expect(await supervisorIssues(loop)).toHaveLength(2);

    // The health page shows them.
    const html = await (
      await page(`/dashboard/projects/${loop.project}/health`, await sessionCookie())
    ).text();
    expect(html).toContain(`runner_offline`);
    expect(html).toContain("runner silent has not been heard from");
    const all = await (await page("/dashboard/health", await sessionCookie())).text();
    expect(all).toContain(`${loop.project}</a>: <span class="headline">4 findings</span>`);

    // The causes go: the silent runner claims again, the disk is freed, the stuck issue is abandoned by a
    // human, and the dead letter's issue is retried.
    // (The claims may lease the issues' queued jobs: 200 or 204, either says the runner is back.)
    await env.DB.prepare("UPDATE runners SET last_seen_at = 0 WHERE id = ?").bind(silent.runnerId).run();
    expect([200, 204]).toContain((await claim(silent, { host: HEALTHY_HOST })).status);
    const freed = { ...nearlyFull, freeBytes: 60 * GIB };
    expect([200, 204]).toContain((await claim(full, { disk: freed, host: HEALTHY_HOST })).status);
    await send(loop, stuck.number, { type: "abandon", by: "maintainer" });
    await send(loop, refused.number, { type: "retry", by: "maintainer" });
    await flushed(loop, stuck.number);
    await flushed(loop, refused.number);

    const third = await check(loop);
    expect(third.findings).toEqual([]);
    const closed = await supervisorIssues(loop);
    expect(closed.map((i) => i.number)).toEqual(opened.map((i) => i.number));
    for (const issue of closed) {
      expect(issue.state).toBe("closed");
      const comments = await loop.forge.listComments(issue.number);
      expect(comments.filter((c) => c.body.startsWith("Resolved:"))).toHaveLength(1);
    }
    // And a run after that changes nothing on the forge.
    await check(loop);
    expect(await supervisorIssues(loop)).toHaveLength(2);
  });

  it("a project's supervisor judges only its runners, whose figures go to the operator, never the forge", async () => {
    const ours = await loopProject("supervised-ours", { supervisor: { runnerSilentMs: 5 * MIN } });
    const theirs = await loopProject("supervised-theirs", { supervisor: { runnerSilentMs: 5 * MIN } });
    const lowMemory = { ...HEALTHY_HOST, memAvailableBytes: 10 * GIB, memTotalBytes: 100 * GIB };
    // Bound to the other project, and silent.
    const bound = await newRunner("theirs-bound", { projects: [theirs.project] });
    await env.DB.prepare("UPDATE runners SET last_seen_at = ? WHERE id = ?")
      .bind(Date.now() - 20 * MIN, bound.runnerId)
      .run();
    // Bound to none, serving the other project only (it holds one of its jobs), short of memory.
    const roaming = await newRunner("theirs-roaming");
    const { number } = await theirs.forge.createIssue({ title: "Work", body: "x", labels: ["backlog"] });
    await send(theirs, number, { type: "triage", blockers: [] });
    await until(theirs, number, (v) => v.outbox.every((o) => o.pending === 0));
    const leased = await call(roaming, "claim", { waitMs: 0, projects: [theirs.project], host: lowMemory });
    expect(leased.status).toBe(200);
    // Ours: bound to this project, short of memory.
    const own = await newRunner("ours-own", { projects: [ours.project] });
    await call(own, "claim", { waitMs: 0, projects: [ours.project], host: lowMemory });

    const found = await check(ours);
    expect(found.findings.map((f) => f.key)).toEqual([`memory_low:${own.runnerId}`]);
    // The figures are the operator's: in the API's finding (and on the dashboard), not on the forge.
    expect(found.findings[0]?.detail).toBe("10.0 GiB of 100.0 GiB (10 %) available");
    expect(await supervisorIssues(ours)).toEqual([]);
    await alertStub(env).drain();
    const told = (await control<{ conveyor: AlertMessage }[]>("alerts-received")).filter(
      (m) => m.conveyor.alert.key === `memory_low:${own.runnerId}`,
    );
    expect(told.map((m) => m.conveyor.alert.text)).toEqual(["10.0 GiB of 100.0 GiB (10 %) available"]);
    const html = await (
      await page(`/dashboard/projects/${ours.project}/health`, await sessionCookie())
    ).text();
    expect(html).toContain("10.0 GiB of 100.0 GiB (10 %) available");

    // The other project's supervisor reports both of its runners.
    const theirsFound = (await check(theirs)).findings.map((f) => f.key).sort();
    expect(theirsFound).toEqual(
      [`memory_low:${roaming.runnerId}`, `runner_offline:${bound.runnerId}`].sort(),
    );
  });

  it("closes only the forge issues it opened: a finding that opened none asks the forge nothing when it resolves", async () => {
    const loop = await loopProject("supervised-untracked", { supervisor: { runnerSilentMs: 5 * MIN } });
    // The registration's backfill reads the forge too: done first, so what is counted below is the check's.
    await backfilled(loop.project);
    // A runner finding: with an operator channel configured (as here), it goes there, not to the forge.
    const silent = await newRunner("untracked", { projects: [loop.project] });
    await env.DB.prepare("UPDATE runners SET last_seen_at = ? WHERE id = ?")
      .bind(Date.now() - 20 * MIN, silent.runnerId)
      .run();
    const found = await check(loop);
    expect(found.findings.map((f) => [f.key, f.forgeIssue])).toEqual([
      [`runner_offline:${silent.runnerId}`, null],
    ]);

    expect([200, 204]).toContain(
      (await call(silent, "claim", { waitMs: 0, projects: [loop.project], host: HEALTHY_HOST })).status,
    );
    const before = await apiCalls(loop);
    expect((await check(loop)).findings).toEqual([]);
    // No search for an issue that was never opened.
    expect(await apiCalls(loop)).toEqual(before);
    expect(await supervisorIssues(loop)).toEqual([]);
  });

  it("runs on the project's alarm once its period is due, and keeps to its period", async () => {
    const loop = await loopProject("supervised-alarm", { supervisor: { periodMs: 5 * MIN } });
    const stub = projectStub(env, loop.project);
    // Registration armed the first check a period away.
    const before = await stub.health();
    expect(before.checkedAt).toBeNull();
    expect(before.nextAt).toBeGreaterThan(Date.now() + 4 * MIN);
    // The period passes: the check is due, and the object's alarm runs it.
    await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec("UPDATE supervisor_state SET next_at = 0");
      await state.storage.setAlarm(Date.now());
    });
    await runDurableObjectAlarm(stub);
    // The alarm runs it in the background, beside the outbox; it ends with the check recorded.
    let after = await stub.health();
    while (after.checkedAt === null) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await stub.health();
    }
    expect(after.findings).toEqual([]);
    expect(after.nextAt).toBeGreaterThan(Date.now() + 4 * MIN);
  });

  it("opens a finding's forge issue once, however often its delivery is retried after a lost answer", async () => {
    const loop = await loopProject("supervised-retry");
    const effect = {
      kind: "open" as const,
      key: "disk_full:r9",
      openedAt: 1_700_000_000_000,
      issue: { title: "[P1] disk: runner r9", body: "Full.", labels: ["supervisor", "P1"] },
      label: "supervisor",
    };
    // The first delivery's answer is lost: the retry knows no number and looks for its marker.
    const first = await deliverSupervisorEffect(env, loop.project, effect, null);
    const again = await deliverSupervisorEffect(env, loop.project, effect, null);
    expect(again).toBe(first);
    // A later occurrence of the same cause is a new issue.
    const later = await deliverSupervisorEffect(
      env,
      loop.project,
      { ...effect, openedAt: 1_800_000_000_000 },
      null,
    );
    expect(later).not.toBe(first);
    const close = {
      kind: "close" as const,
      key: effect.key,
      openedAt: effect.openedAt,
      comment: "Resolved: gone.",
      label: "supervisor",
    };
    expect(await deliverSupervisorEffect(env, loop.project, close, null)).toBe(first);
    expect(await deliverSupervisorEffect(env, loop.project, close, first)).toBe(first);
    const comments = await loop.forge.listComments(first as number);
    expect(comments.filter((c) => c.body.startsWith("Resolved: gone."))).toHaveLength(1);
    expect((await loop.forge.getIssue(first as number)).state).toBe("closed");
    expect(await supervisorIssues(loop)).toHaveLength(2);
    // An issue gone from the forge: the refusal is for good, and the effect is dropped rather than retried.
    expect(await deliverSupervisorEffect(env, loop.project, close, 99_999)).toBeNull();
  });

  it("queues a reap for a finished issue's worktree never reaped, once, and reports nothing it settled", async () => {
    const loop = await loopProject("supervised-reap");
    const now = Date.now();
    // #7 merged an hour ago; its session ran on a runner two hours ago; no reap ever ran for it.
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO issues (project_id, number, state, iteration, seq, updated_at) VALUES (?, 7, 'merged', 1, 9, ?)`,
      ).bind(loop.project, now - 60 * MIN),
      env.DB.prepare(
        `INSERT INTO worker_sessions (session_id, project_id, number, runner_id, iteration, started_at, updated_at)
         VALUES (?, ?, 7, 'runner-x', 1, ?, ?)`,
      ).bind(`sess-${loop.project}`, loop.project, now - 120 * MIN, now - 120 * MIN),
    ]);
    const stub = projectStub(env, loop.project);
    const reaps = async () => (await stub.jobs()).filter((j) => j.kind === "reap" && j.number === 7);

    const first = await check(loop);
    expect(first.findings).toEqual([]);
    expect(await reaps()).toEqual([expect.objectContaining({ status: "queued" })]);
    // Found again before the job's record reaches D1, and after: still one reap, nothing reported.
    expect((await check(loop)).findings).toEqual([]);
    await stub.drain();
    expect((await check(loop)).findings).toEqual([]);
    expect(await reaps()).toHaveLength(1);
    expect(await supervisorIssues(loop)).toEqual([]);
  });

  it("forgets a deleted project: its findings and the forge issues still to write are dropped", async () => {
    const loop = await loopProject("supervised-gone");
    const stub = projectStub(env, loop.project);
    // A finding stands and its forge issue waits in the outbox (its forge failing, say) when the project goes.
    await runInDurableObject(stub, (_instance, state) => {
      const effect = { kind: "open", key: "budget_cap:x", openedAt: 1, label: "supervisor", issue: {} };
      state.storage.sql.exec(
        "INSERT INTO outbox (channel, payload, next_at) VALUES ('supervisor', ?, ?)",
        JSON.stringify(effect),
        Date.now() + 60 * MIN,
      );
      state.storage.sql.exec(
        "INSERT INTO supervisor_findings (key, finding, opened_at, seen_at) VALUES ('budget_cap:x', '{}', 1, 1)",
      );
    });
    const res = await SELF.fetch(`${BASE}/api/v1/projects/${loop.project}`, {
      method: "DELETE",
      headers: OPERATOR,
    });
    expect(res.status).toBe(204);
    expect(await stub.superviseNow(loop.project)).toEqual({
      error: `project ${loop.project} is not registered`,
    });
    expect(await stub.health()).toMatchObject({ project: null, findings: [], nextAt: null });
    const left = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec("SELECT COUNT(*) AS n FROM outbox WHERE channel = 'supervisor'").one(),
    );
    expect(left).toEqual({ n: 0 });
  });
});

/**
 * Alerts that leave the building (issue 30): the watchdog and the supervisors report to the factory's AlertDO,
 * which tells the operator's webhook — here the control server's receiver (test/support/services/control.ts),
 * the Worker's ALERT_WEBHOOK_URL in the tests — once per alert when it opens and once when it resolves.
 */

import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { alertStub } from "../../src/alert-stub.ts";
import type { AlertsView } from "../../src/contracts/alert-object.ts";
import { watchFactory } from "../../src/cron/watchdog.ts";
import { RESOLVED_KEPT } from "../../src/domain/alerts.ts";
import { projectStub } from "../../src/project-stub.ts";
import { told } from "./support/alerts.ts";
import { call, newRunner } from "./support/jobs.ts";
import { type Loop, loopProject } from "./support/review.ts";
import { OPERATOR } from "./support/webhooks.ts";

const MIN = 60_000;
const GIB = 1024 ** 3;
const HEALTHY_HOST = { memAvailableBytes: 8 * GIB, memTotalBytes: 16 * GIB, load1: 0.5, cpus: 4 };

async function check(loop: Loop): Promise<void> {
  const res = await SELF.fetch(`https://conveyor.test/api/v1/projects/${loop.project}/health/check`, {
    method: "POST",
    headers: OPERATOR,
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe("the operator's channel", () => {
  it("hears from the watchdog of a project whose alarm stopped, once, and again when it runs", async () => {
    const loop = await loopProject("watched");
    const stub = projectStub(env, loop.project);
    // The alarm stopped an hour ago: nothing armed since, its last run long past; reconciliation is recent.
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAlarm();
      state.storage.sql.exec(
        "UPDATE pulse SET alarm_at = ?, reconciled_at = ?",
        Date.now() - 60 * MIN,
        Date.now(),
      );
    });
    const key = `watchdog:${loop.project}:alarm`;

    expect((await watchFactory(env)).opened).toContain(key);
    expect((await watchFactory(env)).opened).not.toContain(key);
    const opened = await told(key);
    expect(opened.map((m) => m.conveyor.kind)).toEqual(["opened"]);
    expect(opened[0]?.text).toMatch(/^\[P1\] .*the project's alarm stopped \(60 min since it last ran\)/);
    // Slack reads `text`, Discord `content`: both carry it.
    expect(opened[0]?.content).toContain("the project's alarm stopped");
    expect((await projectStub(env, loop.project).health()).pulse.alarmAt).toBeLessThan(Date.now() - 59 * MIN);
    const view = await (
      await SELF.fetch("https://conveyor.test/api/v1/alerts", { headers: OPERATOR })
    ).json();
    // Both channels took it: the webhook, and Email Routing's binding (which refuses another sender or recipient).
    expect(view).toMatchObject({
      channels: [
        { channel: "webhook", waiting: 0, lastError: null },
        { channel: "email", waiting: 0, lastError: null },
      ],
    });
    expect((view as AlertsView).open.find((a) => a.alert.key === key)?.sources).toEqual([
      `watchdog:${loop.project}`,
    ]);

    // The alarm runs again: the next look resolves it, and says so once.
    await runInDurableObject(stub, (_instance, state) => state.storage.setAlarm(Date.now()));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await watchFactory(env)).resolved).toContain(key);
    expect((await told(key)).map((m) => m.conveyor.kind)).toEqual(["opened", "resolved"]);
  });

  it("hears from the watchdog of a project whose object fails look after look, not of one failed look", async () => {
    const loop = await loopProject("watched-unanswering");
    const stub = projectStub(env, loop.project);
    // Its pulse gone, the object's answer to the watchdog throws; put back, it answers again.
    const failing = () =>
      runInDurableObject(stub, (_instance, state) => void state.storage.sql.exec("DELETE FROM pulse"));
    const answering = () =>
      runInDurableObject(stub, (_instance, state) => {
        const now = Date.now();
        state.storage.sql.exec(
          "INSERT OR IGNORE INTO pulse (id, since, alarm_at, reconciled_at) VALUES (1, ?, ?, ?)",
          now,
          now,
          now,
        );
      });
    const key = `watchdog:${loop.project}:unreachable`;
    const look = async () => (await watchFactory(env)).opened.includes(key);

    // A failed look between answers is a blip, each time.
    await failing();
    expect(await look()).toBe(false);
    await answering();
    expect(await look()).toBe(false);
    await failing();
    expect(await look()).toBe(false);
    expect(await look()).toBe(false);
    expect(await told(key)).toEqual([]);
    // The third look in a row that it fails opens the alert; its first answer resolves it.
    expect(await look()).toBe(true);
    await answering();
    expect((await watchFactory(env)).resolved).toContain(key);
    expect((await told(key)).map((m) => m.conveyor.kind)).toEqual(["opened", "resolved"]);
  });

  it("hears that a deleted project's watchdog alert resolved", async () => {
    const loop = await loopProject("watched-deleted");
    await runInDurableObject(projectStub(env, loop.project), async (_instance, state) => {
      await state.storage.deleteAlarm();
      state.storage.sql.exec("UPDATE pulse SET alarm_at = ?", Date.now() - 60 * MIN);
    });
    const key = `watchdog:${loop.project}:alarm`;
    expect((await watchFactory(env)).opened).toContain(key);
    const deleted = await SELF.fetch(`https://conveyor.test/api/v1/projects/${loop.project}`, {
      method: "DELETE",
      headers: OPERATOR,
    });
    expect(deleted.ok).toBe(true);
    expect((await watchFactory(env)).resolved).toContain(key);
    expect((await told(key)).map((m) => m.conveyor.kind)).toEqual(["opened", "resolved"]);
  });

  it("hears of one silent runner serving three projects once, and not on their forges", async () => {
    const settings = { supervisor: { runnerSilentMs: 5 * MIN } };
    const loops = [
      await loopProject("alert-a", settings),
      await loopProject("alert-b", settings),
      await loopProject("alert-c", settings),
    ];
    const runner = await newRunner("shared-silent", { projects: loops.map((l) => l.project) });
    await env.DB.prepare("UPDATE runners SET last_seen_at = ? WHERE id = ?")
      .bind(Date.now() - 20 * MIN, runner.runnerId)
      .run();
    const key = `runner_offline:${runner.runnerId}`;

    for (const loop of loops) await check(loop);
    const opened = await told(key);
    expect(opened.map((m) => m.conveyor.kind)).toEqual(["opened"]);
    expect(opened[0]?.text).toContain("runner shared-silent");
    for (const loop of loops) {
      const health = await projectStub(env, loop.project).health();
      expect(health.findings.map((f) => f.key)).toContain(key);
      // The operator's business: no project's tracker gets an issue for it.
      expect(health.findings.find((f) => f.key === key)?.forgeIssue).toBeNull();
      expect(await loop.forge.listIssuesByLabel("supervisor", "all")).toEqual([]);
    }

    // The runner is back: the alert stands until the last project that saw it no longer does.
    expect([200, 204]).toContain(
      (await call(runner, "claim", { waitMs: 0, projects: loops.map((l) => l.project), host: HEALTHY_HOST }))
        .status,
    );
    const [first, second, third] = loops as [Loop, Loop, Loop];
    await check(first);
    await check(second);
    expect((await told(key)).map((m) => m.conveyor.kind)).toEqual(["opened"]);
    await check(third);
    expect((await told(key)).map((m) => m.conveyor.kind)).toEqual(["opened", "resolved"]);
    // Kept once resolved: when it was open, and who stood behind it last.
    const view = await alertStub(env).view();
    expect(view.open.map((a) => a.alert.key)).not.toContain(key);
    const resolved = view.resolved.find((a) => a.alert.key === key);
    expect(resolved).toMatchObject({
      sources: [`project:${third.project}`],
      resolvedBy: `project:${third.project}`,
      openedAt: opened[0]?.conveyor.openedAt,
    });
    expect(resolved?.resolvedAt).toBeGreaterThanOrEqual(resolved?.openedAt ?? Number.POSITIVE_INFINITY);
  });

  it("keeps the newest resolved alerts, newest first, up to its bound", async () => {
    const source = "watchdog:kept-bound";
    const alerts = Array.from({ length: RESOLVED_KEPT + 1 }, (_, i) => ({
      key: `${source}:${String(i).padStart(3, "0")}`,
      priority: "P1" as const,
      title: `alert ${i}`,
      text: "",
    }));
    const stub = alertStub(env);
    await stub.report([{ source, alerts }]);
    await stub.report([{ source, alerts: [] }]);
    const mine = (await stub.view()).resolved.filter((a) => a.sources.includes(source));
    expect(mine).toHaveLength(RESOLVED_KEPT);
    // Resolved in one report, in the order they opened: the oldest is the one let go.
    expect(mine.at(-1)?.alert.key).toBe(alerts[1]?.key);
    expect(mine[0]?.alert.key).toBe(alerts.at(-1)?.key);
  });
});

import { describe, expect, it } from "vitest";
import {
  type Alert,
  type AlertMessage,
  backfillSource,
  emailParts,
  type OpenAlert,
  onTracker,
  reportChanges,
  sourceOf,
  supervisorAlerts,
  supervisorSource,
  watchdogSource,
  webhookBody,
} from "../../src/domain/alerts.ts";
import type { Finding } from "../../src/domain/supervisor.ts";
import {
  alarmSilenceMs,
  UNREACHABLE_CONFIRM,
  type Watched,
  watchdogAlerts,
} from "../../src/domain/watchdog.ts";

const NOW = Date.UTC(2026, 10, 27, 12);
const MIN = 60_000;
const alert = (key: string, title = key): Alert => ({ key, priority: "P1", title, text: "" });
const open = (key: string, sources: string[]): OpenAlert => ({ alert: alert(key), sources, openedAt: 1 });

describe("reportChanges", () => {
  it("opens what a source reports first, and keeps it quiet while it reports it again", () => {
    const first = reportChanges([], { source: "project:a", alerts: [alert("k")] });
    expect(first.opened.map((a) => a.key)).toEqual(["k"]);
    const again = reportChanges([open("k", ["project:a"])], {
      source: "project:a",
      alerts: [alert("k", "new")],
    });
    expect(again).toEqual({
      opened: [],
      kept: [{ alert: alert("k", "new"), sources: ["project:a"] }],
      resolved: [],
    });
  });

  it("keeps an alert open while another source still reports it, and resolves it with the last", () => {
    const two = [open("runner_offline:r", ["project:a", "project:b"])];
    const joined = reportChanges([open("runner_offline:r", ["project:a"])], {
      source: "project:b",
      alerts: [alert("runner_offline:r")],
    });
    expect(joined.opened).toEqual([]);
    expect(joined.kept[0]?.sources).toEqual(["project:a", "project:b"]);
    const oneLeft = reportChanges(two, { source: "project:a", alerts: [] });
    expect(oneLeft.resolved).toEqual([]);
    expect(oneLeft.kept[0]?.sources).toEqual(["project:b"]);
    const gone = reportChanges([open("runner_offline:r", ["project:b"])], {
      source: "project:b",
      alerts: [],
    });
    expect(gone.resolved.map((a) => a.alert.key)).toEqual(["runner_offline:r"]);
  });

  it("leaves alone what a source never reported", () => {
    const changes = reportChanges([open("k", ["watchdog:a"])], { source: "project:a", alerts: [] });
    expect(changes).toEqual({
      opened: [],
      kept: [{ alert: alert("k"), sources: ["watchdog:a"] }],
      resolved: [],
    });
  });
});

const finding = (over: Partial<Finding>): Finding => ({
  key: "k",
  priority: "P1",
  check: "issue_stuck",
  subject: "#1",
  summary: "issue #1 is stuck",
  ...over,
});

describe("supervisorAlerts", () => {
  it("takes a project's P0 and P1 findings under the project's name, and its runners' of any priority as theirs", () => {
    const alerts = supervisorAlerts("acme", [
      finding({ key: "issue_stuck:1:running" }),
      finding({ key: "issue_waiting:2", priority: "P2", check: "issue_waiting" }),
      finding({
        key: "load:r1",
        priority: "P3",
        check: "load",
        summary: "runner build-a is overloaded",
        detail: "load 9 on 2 CPUs",
      }),
    ]);
    expect(alerts).toEqual([
      { key: "acme:issue_stuck:1:running", priority: "P1", title: "acme: issue #1 is stuck", text: "" },
      { key: "load:r1", priority: "P3", title: "runner build-a is overloaded", text: "load 9 on 2 CPUs" },
    ]);
  });

  it("keeps runner findings off the tracker only where an operator channel hears them", () => {
    expect(onTracker({ check: "runner_offline" }, true)).toBe(false);
    expect(onTracker({ check: "runner_offline" }, false)).toBe(true);
    expect(onTracker({ check: "dead_letter" }, true)).toBe(true);
  });
});

describe("sourceOf", () => {
  it("names who reports, for the pages, and reads back what the sources are called", () => {
    expect(sourceOf(supervisorSource("acme"))).toEqual({ by: "supervisor", project: "acme" });
    expect(sourceOf(watchdogSource("acme"))).toEqual({ by: "watchdog", project: "acme" });
    expect(sourceOf(backfillSource("acme"))).toEqual({ by: "backfill", project: "acme" });
    expect(sourceOf("cron")).toBeNull();
    expect(sourceOf("project:")).toBeNull();
  });
});

describe("what the channel is sent", () => {
  const message: AlertMessage = {
    kind: "opened",
    alert: {
      key: "k",
      priority: "P0",
      title: "runner <!channel> is @everyone's & short",
      text: "x".repeat(3_000),
    },
    openedAt: NOW,
    at: NOW,
  };

  it("is JSON Slack and Discord both take, mentioning nobody", () => {
    const body = webhookBody(message);
    expect(body.text.startsWith("[P0] runner &lt;!channel&gt; is @everyone's &amp; short\n")).toBe(true);
    expect(body.content.length).toBe(2_000);
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.conveyor).toMatchObject({ id: `k:${NOW}:opened`, kind: "opened" });
  });

  it("says when a resolved alert had opened", () => {
    const resolved = webhookBody({ ...message, kind: "resolved", at: NOW + 5 * MIN });
    expect(resolved.content).toBe(
      "Resolved [P0] runner <!channel> is @everyone's & short (open since 2026-11-27T12:00:00.000Z)",
    );
  });

  it("is an email whose subject is one line", () => {
    const { subject, body } = emailParts({ ...message, alert: { ...message.alert, title: "a\r\nBcc: x" } });
    expect(subject).toBe("Conveyor: [P0] a Bcc: x");
    expect(body).toContain("Alert: k");
  });
});

describe("watchdogAlerts", () => {
  const watched = (pulse: Watched["pulse"]): Watched => ({
    project: "acme",
    supervisorPeriodMs: 10 * MIN,
    reconcilePeriodMs: MIN,
    pulse,
  });
  const alive = {
    alarmAt: NOW - MIN,
    reconciledAt: NOW - MIN,
    reconcileError: null,
    since: NOW - 1_000 * MIN,
  };

  it("finds nothing while the alarm and reconciliation run", () => {
    expect(watchdogAlerts(watched(alive), NOW)).toEqual([]);
  });

  it("finds an alarm silent past two supervisor periods and the grace", () => {
    const limit = alarmSilenceMs(watched(alive));
    expect(watchdogAlerts(watched({ ...alive, alarmAt: NOW - limit }), NOW)).toEqual([]);
    const stopped = watchdogAlerts(watched({ ...alive, alarmAt: NOW - limit - 1 }), NOW);
    expect(stopped.map((a) => a.key)).toEqual(["watchdog:acme:alarm"]);
  });

  it("counts a silence from the first pulse when the alarm never ran", () => {
    const never = { ...alive, alarmAt: null };
    expect(watchdogAlerts(watched({ ...never, since: NOW - MIN }), NOW)).toEqual([]);
    expect(watchdogAlerts(watched(never), NOW).map((a) => a.key)).toEqual(["watchdog:acme:alarm"]);
  });

  it("finds a reconciliation failing past the rate limit's spacing, with its error", () => {
    const failing = { ...alive, reconciledAt: NOW - 2 * 60 * MIN, reconcileError: "forge 502" };
    const [found] = watchdogAlerts(watched(failing), NOW);
    expect(found?.key).toBe("watchdog:acme:reconciliation");
    expect(found?.text).toContain("forge 502");
    expect(watchdogAlerts(watched({ ...failing, reconciledAt: NOW - 50 * MIN }), NOW)).toEqual([]);
  });

  it("finds an object that does not answer, to be confirmed by the looks that follow", () => {
    const [found] = watchdogAlerts(watched({ error: "Durable Object reset" }), NOW);
    expect(found?.key).toBe("watchdog:acme:unreachable");
    expect(found?.confirm).toEqual(UNREACHABLE_CONFIRM);
  });
});

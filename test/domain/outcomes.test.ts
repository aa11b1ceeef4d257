import { describe, expect, it } from "vitest";
import { outcomes, outcomesCsv, percentile } from "../../src/outcomes/outcomes.ts";
import type { FinishedRow } from "../../src/outcomes/rows.ts";
import { DAY_MS, windowOf } from "../../src/outcomes/window.ts";

const NOV1 = Date.parse("2026-11-01T00:00:00Z") / DAY_MS;

describe("the outcomes window", () => {
  const now = Date.parse("2026-11-30T15:00:00Z");
  it("is the last 30 UTC days by default, today included", () => {
    expect(windowOf({}, now)).toMatchObject({ firstDay: NOV1, lastDay: NOV1 + 29 });
  });
  it("runs 30 days from a `from`, or up to a `to`", () => {
    expect(windowOf({ from: NOV1 }, now)).toMatchObject({ firstDay: NOV1, lastDay: NOV1 + 29 });
    expect(windowOf({ to: NOV1 + 29 }, now)).toMatchObject({ firstDay: NOV1, lastDay: NOV1 + 29 });
    expect(windowOf({ from: NOV1, to: NOV1 }, now)).toMatchObject({
      fromMs: NOV1 * DAY_MS,
      toMs: (NOV1 + 1) * DAY_MS,
    });
  });
  it("refuses a window backwards or longer than a year", () => {
    expect(windowOf({ from: NOV1 + 1, to: NOV1 }, now)).toEqual({
      error: "from (2026-11-02) is after to (2026-11-01)",
    });
    expect(windowOf({ from: NOV1 - 400, to: NOV1 }, now)).toEqual({ error: "a window is at most 366 days" });
  });
});

describe("percentiles", () => {
  it.each([
    [[], 50, null],
    [[7], 90, 7],
    [[1, 2, 3, 4], 50, 2],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 100, 10],
  ])("of %j, p%i is %s (nearest rank)", (sorted, p, expected) => {
    expect(percentile(sorted, p)).toBe(expected);
  });
});

describe("the report", () => {
  const window = { firstDay: NOV1, lastDay: NOV1 + 1, fromMs: NOV1 * DAY_MS, toMs: (NOV1 + 2) * DAY_MS };
  const row = (over: Partial<FinishedRow>): FinishedRow => ({
    at: NOV1 * DAY_MS + 3_600_000,
    ended: "merged",
    labeled_at: NOV1 * DAY_MS,
    critic_rounds: 1,
    human_rounds: 0,
    escalations: 0,
    first_ci: "awaiting_review",
    usd: 1,
    ...over,
  });
  const edge = (from_state: string, to_state: string, event: string, ms: number, n = 1) => ({
    from_state,
    to_state,
    event,
    inside: 1 as const,
    day: NOV1,
    n,
    ms,
  });
  // A window of 100 ms: #1 queued when it began, running from 60 ms on; #2 merging until it merged at 90 ms;
  // #3 and #4 running, each escalated at 95 ms by an event the report has no words for, answered at 97 ms.
  const rows = {
    finished: [row({}), row({ ended: "abandoned", escalations: 2, first_ci: null, labeled_at: null })],
    edges: [
      edge("queued", "running", "dispatched", 40),
      edge("merging", "merged", "merge_confirmed", 10),
      edge("running", "escalated", "some_new_event", 10, 2),
      edge("escalated", "running", "human_reply", 6, 2),
    ],
    states: [
      { state: "running", n: 3 },
      { state: "merged", n: 1 },
    ],
    windowMs: 100,
    usage: [],
  };

  it("measures nothing where nothing happened, and names a cause it does not know by its event", () => {
    const report = outcomes(rows, window, "p");
    expect(report.days[1]).toMatchObject({
      merged: 0,
      leadTimeP50Ms: null,
      firstPassCiRate: null,
      costUsd: 0,
    });
    expect(report.totals).toMatchObject({ merged: 1, finished: 2, escalationRate: 0.5, cacheHitRatio: null });
    expect(report.escalationCauses).toEqual([{ cause: "some_new_event", label: "some_new_event", count: 2 }]);
    expect(report.waiting).toEqual([
      { state: "running", ms: 40 + 2 * (95 + 3) },
      { state: "merging", ms: 90 },
      { state: "queued", ms: 60 },
      { state: "escalated", ms: 4 },
    ]);
  });

  it("writes CSV as RFC 4180 does: quoted where a field holds a comma, a quote or a line break", () => {
    const report = outcomes(
      { ...rows, edges: [edge("running", "escalated", 'a "quoted", cause', 1)] },
      window,
      "p",
    );
    expect(outcomesCsv(report, "causes")).toBe(
      'cause,label,count\r\n"a ""quoted"", cause","a ""quoted"", cause",1\r\n',
    );
    const days = outcomesCsv(report).split("\r\n");
    expect(days).toHaveLength(4);
    expect(days[2]).toBe("2026-11-02,0,0,,,,,,0,,0,,");
  });
});

import { describe, expect, it } from "vitest";
import { confirmReport, type Streak } from "../../src/domain/alert-streaks.ts";
import type { ReportedAlert } from "../../src/domain/alerts.ts";

const MIN = 60_000;
const NOW = Date.UTC(2026, 10, 27, 12);
const confirm = { looks: 3, ms: 15 * MIN };
const blip: ReportedAlert = { key: "w:acme:unreachable", priority: "P1", title: "t", text: "x", confirm };
const plain: ReportedAlert = { key: "w:acme:alarm", priority: "P1", title: "t", text: "x" };
const { confirm: _, ...stripped } = blip;

/** Reports `alerts` from one source at each of `times`, carrying the streaks from one to the next. */
function reports(times: number[], alerts: ReportedAlert[] | ((i: number) => ReportedAlert[])) {
  let streaks = new Map<string, Streak>();
  return times.map((now, i) => {
    const out = confirmReport(
      { source: "w:acme", alerts: typeof alerts === "function" ? alerts(i) : alerts },
      new Set(),
      streaks,
      now,
    );
    streaks = new Map(out.streaks.map((s) => [s.key, s]));
    return out;
  });
}

describe("confirmReport", () => {
  it("lets an alert without `confirm` stand at once", () => {
    const [first] = reports([NOW], [plain]);
    expect(first?.report.alerts).toEqual([plain]);
    expect(first?.streaks).toEqual([]);
  });

  it("holds one that must persist until its `looks`-th report in a row, then lets it stand without `confirm`", () => {
    const looks = reports([NOW, NOW + 5 * MIN, NOW + 10 * MIN], [blip]);
    expect(looks.map((l) => l.report.alerts)).toEqual([[], [], [stripped]]);
    expect(looks.at(-1)?.streaks).toEqual([{ key: blip.key, firstAt: NOW, looks: 3 }]);
  });

  it("or once it has lasted `ms`, however few reports carried it", () => {
    const looks = reports([NOW, NOW + 15 * MIN - 1, NOW + 15 * MIN], [blip]);
    expect(looks.map((l) => l.report.alerts.length)).toEqual([0, 0, 1]);
  });

  it("starts over after a report without it: failures apart are blips each", () => {
    const times = [0, 1, 2, 3, 4].map((i) => NOW + i * 5 * MIN);
    const looks = reports(times, (i) => (i === 2 ? [] : [blip]));
    expect(looks.map((l) => l.report.alerts.length)).toEqual([0, 0, 0, 0, 0]);
    expect(looks[2]?.streaks).toEqual([]);
    expect(looks[4]?.streaks).toEqual([{ key: blip.key, firstAt: NOW + 15 * MIN, looks: 2 }]);
  });

  it("keeps one already open standing on its next report", () => {
    const out = confirmReport({ source: "w:acme", alerts: [blip] }, new Set([blip.key]), new Map(), NOW);
    expect(out.report.alerts).toEqual([stripped]);
  });
});

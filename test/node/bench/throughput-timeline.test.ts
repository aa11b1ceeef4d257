/** The throughput bench's arithmetic: what its figures are made of must add up. */
import { describe, expect, it } from "vitest";
import {
  atLeast,
  busySpans,
  clip,
  covered,
  coveredWithin,
  jobLines,
  milestoneGaps,
  slotUse,
  stateSpans,
} from "../../bench/throughput-timeline.ts";

const span = (start: number, end: number) => ({ start, end });

describe("the throughput bench's timeline", () => {
  it("counts overlapping spans once, and only what lies inside a window", () => {
    expect(covered([span(0, 10), span(5, 15), span(20, 25), span(30, 30)])).toBe(20);
    expect(clip([span(0, 10), span(12, 20)], span(5, 15))).toEqual([span(5, 10), span(12, 15)]);
    expect(coveredWithin([span(0, 10), span(4, 12)], [span(2, 6), span(8, 20)])).toBe(8);
  });

  it("finds where at least k spans overlap; spans that only touch do not", () => {
    const busy = [span(0, 10), span(5, 15), span(10, 20)];
    expect(atLeast(busy, 2)).toEqual([span(5, 15)]);
    expect(atLeast(busy, 3)).toEqual([]);
    expect(atLeast(busy, 1)).toEqual([span(0, 20)]);
  });

  it("gives each state the time from its edge to the next, the last one until the end", () => {
    const edge = (seq: number, to: string, at: number) => ({ number: 7, seq, from: "", to, event: "", at });
    const spans = stateSpans([edge(2, "running", 10), edge(1, "queued", 0), edge(3, "queued", 30)], 50);
    expect(spans.get("queued")).toEqual([span(0, 10), span(30, 50)]);
    expect(spans.get("running")).toEqual([span(10, 30)]);
  });

  it("tells busy slots from idle ones while issues wait, and from idle ones with nothing waiting", () => {
    // Two slots: both busy 0–50 with an issue waiting; one busy 50–100 with nothing waiting.
    const use = slotUse([span(0, 50), span(0, 100)], [span(0, 50)], 2, span(0, 100), 10);
    expect(use.busyShare).toBeCloseTo(0.75);
    expect(use.saturatedShare).toBeCloseTo(0.5);
    expect(use.starvedShare).toBeCloseTo(0.5);
    expect(use.idleWhileWaitingShare).toBe(0);
    // One slot idle while an issue waits: dispatch is what holds it up.
    const stalled = slotUse([span(0, 100)], [span(0, 100)], 2, span(0, 100), 10);
    expect(stalled.idleWhileWaitingShare).toBeCloseTo(0.5);
  });

  it("reads a slot busy from a job's claim to its last line in the runner's log", () => {
    const log = [
      '{"time":"2026-11-27T10:00:00.000Z","level":"info","msg":"claimed","slot":0,"job":"j1","issue":9}',
      "not json",
      '{"time":"2026-11-27T10:00:01.000Z","level":"info","msg":"job started","job":"j1","issue":9}',
      '{"time":"2026-11-27T10:00:02.500Z","level":"info","msg":"job done","job":"j1","issue":9}',
      '{"time":"2026-11-27T10:00:03.000Z","level":"info","msg":"claimed","slot":1,"job":"j2","issue":10}',
    ].join("\n");
    const lines = jobLines(log);
    expect(lines.map((l) => [l.msg, l.issue])).toEqual([
      ["claimed", 9],
      ["job started", 9],
      ["job done", 9],
      ["claimed", 10],
    ]);
    const start = Date.parse("2026-11-27T10:00:00.000Z");
    expect(busySpans(lines)).toEqual([span(start, start + 2_500)]);
  });

  it("takes each step's gap over the issues that reached both of its ends", () => {
    const milestones = new Map([
      [
        1,
        new Map([
          ["a", 0],
          ["b", 10],
          ["c", 40],
        ]),
      ],
      [
        2,
        new Map([
          ["a", 0],
          ["c", 50],
        ]),
      ],
    ]);
    const max = (values: number[]) => Math.max(...values);
    expect(milestoneGaps(milestones, ["a", "b", "c"], max)).toEqual([
      { from: "a", to: "b", ms: 10 },
      { from: "b", to: "c", ms: 30 },
    ]);
  });
});

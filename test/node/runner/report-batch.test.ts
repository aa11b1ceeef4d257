/** How a runner coalesces its jobs' heartbeats and events into reports (runner/report-batch.ts, runner/lease.ts). */
import { describe, expect, it } from "vitest";
import { LeaseLostError, RunnerApi } from "../../../runner/api.ts";
import { LeaseKeeper, nextBeatAt } from "../../../runner/lease.ts";
import { Logger } from "../../../runner/log.ts";
import { Secrets } from "../../../runner/redact.ts";
import { chunks, ReportBatch } from "../../../runner/report-batch.ts";
import type { RunnerEvent } from "../../../src/runner-api/contract.ts";
import {
  MAX_REPORT_JOBS,
  type ReportAnswer,
  type ReportItem,
} from "../../../src/runner-api/report-contract.ts";
import { makeJob } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";

const LEASE = { leaseExpiresAt: 1, leaseMs: 60_000, cancelled: false };
const log = (message: string): RunnerEvent => ({ kind: "log", level: "info", message });

/** A batch whose reports are answered by `answer` (each job renewed, by default), and the reports it sent. */
function batch(answer = (item: ReportItem): ReportAnswer => ({ jobId: item.jobId, ok: true, lease: LEASE })) {
  const sent: ReportItem[][] = [];
  const reports = new ReportBatch(
    async (items) => {
      sent.push(items);
      return items.map(answer);
    },
    { eventsWindowMs: 200 },
  );
  return { reports, sent };
}

describe("a runner's reports", () => {
  it("carry the heartbeats due together, and the events waiting, in one call", async () => {
    const { reports, sent } = batch();
    const events = reports.events("p.1.a", "t1", [log("one")]);
    const beats = await Promise.all([reports.heartbeat("p.1.a", "t1"), reports.heartbeat("p.2.b", "t2")]);
    await events;
    expect(beats).toEqual([LEASE, LEASE]);
    expect(sent).toEqual([
      [
        { jobId: "p.1.a", leaseToken: "t1", heartbeat: true, events: [log("one")] },
        { jobId: "p.2.b", leaseToken: "t2", heartbeat: true, events: [] },
      ],
    ]);
  });

  it("hold events for the window unless one is urgent; an urgent one takes what waits with it", async () => {
    const { reports, sent } = batch();
    const started = performance.now();
    await reports.events("p.1.a", "t1", [log("later")]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    const waiting = reports.events("p.1.a", "t1", [log("waits")]);
    await reports.heartbeat("p.2.b", "t2", true);
    await waiting;
    expect(sent).toHaveLength(2);
    expect(sent[1]?.map((item) => item.jobId)).toEqual(["p.1.a", "p.2.b"]);
    expect(performance.now() - started).toBeLessThan(190 + 150);
  });

  it("refuse a fenced job alone: its callers get LeaseLostError, the others their leases", async () => {
    const { reports } = batch((item) =>
      item.jobId === "p.2.stale"
        ? { jobId: item.jobId, ok: false, status: 409, error: "not current" }
        : { jobId: item.jobId, ok: true, lease: LEASE },
    );
    const [kept, stale, events] = await Promise.allSettled([
      reports.heartbeat("p.1.a", "t1"),
      reports.heartbeat("p.2.stale", "t2"),
      reports.events("p.2.stale", "t2", [log("x")]),
    ]);
    expect(kept).toEqual({ status: "fulfilled", value: LEASE });
    for (const refused of [stale, events]) {
      expect(refused?.status).toBe("rejected");
      expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    }
  });

  it("fail every caller of a report that got no answer, as their own calls would have", async () => {
    const reports = new ReportBatch(async () => {
      throw new Error("network down");
    });
    const results = await Promise.allSettled([
      reports.heartbeat("p.1.a", "t1"),
      reports.heartbeat("p.2.b", "t2"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });

  it("split past a report's limits", () => {
    const entry = (i: number, chars = 0): [string, { events: RunnerEvent[] }] => [
      `p.${i}.x`,
      { events: chars ? [log("x".repeat(chars))] : [] },
    ];
    const many = Array.from({ length: MAX_REPORT_JOBS + 1 }, (_, i) => entry(i));
    expect(chunks(many).map((c) => c.length)).toEqual([MAX_REPORT_JOBS, 1]);
    const big = Array.from({ length: 3 }, (_, i) => entry(i, 400_000));
    expect(chunks(big).map((c) => c.length)).toEqual([2, 1]);
  });
});

describe("the leases of one runner", () => {
  it("beat in the same reports, and a fenced one stops alone", async () => {
    const worker = await FakeWorker.start({ leaseMs: 600 });
    try {
      const api = new RunnerApi(worker.url, worker.issueToken());
      const lost: string[] = [];
      const keepers: LeaseKeeper[] = [];
      for (const id of ["job-1", "job-2"]) {
        worker.enqueue(makeJob({ id, cloneUrl: "https://forge.test/acme/widgets.git" }));
        const claim = await api.claim({ waitMs: 0, holding: [] });
        if (!claim) throw new Error("nothing to claim");
        const log = new Logger({ level: "error", secrets: new Secrets() });
        const { leaseToken, leaseMs = 600 } = claim;
        const onLost = () => lost.push(id);
        keepers.push(
          new LeaseKeeper({ api, jobId: id, leaseToken, leaseMs, log, onCancelled: () => {}, onLost }),
        );
      }
      for (const keeper of keepers) keeper.start();
      // From their second beat on, both leases beat at the same moments: one report each time (the Worker sees
      // one arrival for both).
      const beats = (id: string) => worker.callsOf("heartbeat", id).map((c) => c.at);
      await worker.waitFor(() => beats("job-1").length >= 4 && beats("job-2").length >= 4);
      expect(beats("job-1").slice(1, 4)).toEqual(beats("job-2").slice(1, 4));
      expect(worker.callsOf("heartbeat").every((c) => c.status === 200)).toBe(true);

      worker.revoke("job-1");
      await worker.waitFor(() => lost.length > 0);
      const after = beats("job-2").length;
      await worker.waitFor(() => beats("job-2").length >= after + 2);
      expect(lost).toEqual(["job-1"]);
      expect(keepers.map((k) => k.held)).toEqual([false, true]);
      for (const keeper of keepers) keeper.stop();
    } finally {
      await worker.close();
    }
  });
});

describe("a Worker older than reports", () => {
  it("gets each job's heartbeat and events on their own routes", async () => {
    const worker = await FakeWorker.start();
    try {
      worker.withoutReport = true;
      const api = new RunnerApi(worker.url, worker.issueToken(), { eventsWindowMs: 0 });
      worker.enqueue(makeJob({ id: "job-1", cloneUrl: "https://forge.test/acme/widgets.git" }));
      const claim = await api.claim({ waitMs: 0, holding: [] });
      if (!claim) throw new Error("nothing to claim");
      await api.events(claim.job.id, claim.leaseToken, [log("hello")]);
      expect(await api.heartbeat(claim.job.id, claim.leaseToken)).toMatchObject({ cancelled: false });
      worker.revoke("job-1");
      await expect(api.heartbeat(claim.job.id, claim.leaseToken)).rejects.toBeInstanceOf(LeaseLostError);
      expect(worker.events.get("job-1")).toEqual([log("hello")]);
      expect(worker.calls.filter((c) => c.status < 300).map((c) => c.route)).toEqual([
        "claim",
        "events",
        "heartbeat",
      ]);
      expect(worker.violations).toEqual([]);
    } finally {
      await worker.close();
    }
  });
});

describe("the heartbeat grid", () => {
  it("puts every lease's beats on the same points, never more than an interval apart", () => {
    const interval = 20_000;
    for (const sentAt of [0, 1, 9_999, 19_999, 20_000, 123_456.7]) {
      const next = nextBeatAt(sentAt, interval);
      expect(next).toBeGreaterThan(sentAt);
      expect(next - sentAt).toBeLessThanOrEqual(interval);
      expect(next % interval).toBe(0);
      // On the grid, the beat after lands exactly one interval later.
      expect(nextBeatAt(next, interval)).toBe(next + interval);
    }
    // Two leases confirmed seconds apart beat together from then on.
    expect(nextBeatAt(3_000, interval)).toBe(nextBeatAt(18_000, interval));
  });

  it("keeps to whole milliseconds for intervals that are not", () => {
    const interval = 10_000 / 3;
    let at = nextBeatAt(17, interval);
    for (let i = 0; i < 1_000; i++) {
      const next = nextBeatAt(at, interval);
      expect(next - at).toBe(Math.floor(interval));
      at = next;
    }
  });
});

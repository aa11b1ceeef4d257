import { describe, expect, it } from "vitest";
import { OFFLINE_AFTER_MS, runnerPresence } from "../../src/runner-api/presence.ts";

const NOW = Date.parse("2026-11-25T12:00:00Z");
const runner = (over: Partial<Parameters<typeof runnerPresence>[0]> = {}) => ({
  lastSeenAt: NOW - 1_000,
  offlineAt: null,
  jobs: [],
  ...over,
});

describe("a runner's presence", () => {
  it("is idle or busy while it calls", () => {
    expect(runnerPresence(runner(), NOW)).toEqual({ status: "idle" });
    expect(runnerPresence(runner({ jobs: [{}] }), NOW)).toEqual({ status: "busy" });
    expect(runnerPresence(runner({ lastSeenAt: NOW - OFFLINE_AFTER_MS }), NOW)).toEqual({ status: "idle" });
  });

  it("is offline at once when it said it stops", () => {
    expect(runnerPresence(runner({ offlineAt: NOW - 10, jobs: [{}] }), NOW)).toEqual({
      status: "offline",
      since: NOW - 10,
      stopped: true,
    });
  });

  it("is offline when silent longer than a live runner ever is: a claim's wait, within a heartbeat period", () => {
    const lastSeenAt = NOW - OFFLINE_AFTER_MS - 1;
    expect(runnerPresence(runner({ lastSeenAt }), NOW)).toEqual({
      status: "offline",
      since: lastSeenAt,
      stopped: false,
    });
    expect(OFFLINE_AFTER_MS).toBeLessThanOrEqual(60_000);
  });
});

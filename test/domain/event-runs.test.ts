import { describe, expect, it } from "vitest";
import { type EventRunFacts, eventRunDecision } from "../../src/agents/event-runs.ts";

const facts = (over: Partial<EventRunFacts> = {}): EventRunFacts => ({
  sender: "mallory",
  senderRecent: 0,
  perSenderPerHour: 5,
  writersOnly: false,
  writer: "unknown",
  ...over,
});

describe("eventRunDecision", () => {
  it("starts an anyone-agent's run under the sender's rate without asking the forge", () => {
    expect(eventRunDecision(facts({ senderRecent: 4 }))).toEqual({ kind: "start" });
  });

  it("at the rate, asks whether the sender may write: a writer is not held to it, anyone else is", () => {
    expect(eventRunDecision(facts({ senderRecent: 5 }))).toEqual({ kind: "ask" });
    expect(eventRunDecision(facts({ senderRecent: 5, writer: true }))).toEqual({ kind: "start" });
    expect(eventRunDecision(facts({ senderRecent: 150, writer: false }))).toEqual({
      kind: "skip",
      reason: "mallory started 150 event runs in the last hour (eventRuns.perSenderPerHour 5)",
    });
  });

  it("a rate of 0 starts runs for writers only", () => {
    expect(eventRunDecision(facts({ perSenderPerHour: 0, writer: false }))).toMatchObject({ kind: "skip" });
    expect(eventRunDecision(facts({ perSenderPerHour: 0, writer: true }))).toEqual({ kind: "start" });
  });

  it("a writers-only agent asks, and runs for writers only", () => {
    expect(eventRunDecision(facts({ writersOnly: true }))).toEqual({ kind: "ask" });
    expect(eventRunDecision(facts({ writersOnly: true, writer: true }))).toEqual({ kind: "start" });
    expect(eventRunDecision(facts({ writersOnly: true, writer: false }))).toEqual({
      kind: "skip",
      reason: "mallory has no write access",
    });
  });
});

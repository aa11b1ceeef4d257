import { describe, expect, it } from "vitest";
import { MergeTurns } from "../../../durable-objects/project/merge-turns.ts";

describe("a project's merge turn", () => {
  it("is held by one merge at a time; the next takes it when that one ends", async () => {
    const turns = new MergeTurns();
    expect(await turns.take("a", 60_000, 0)).toBe(true);
    expect(await turns.take("b", 60_000, 0)).toBe(false);
    const waiting = turns.take("b", 60_000, 60_000);
    turns.end("a");
    expect(await waiting).toBe(true);
    expect(await turns.take("a", 60_000, 0)).toBe(false);
  });

  it("is taken again by the delivery that holds it (a retry), and only its holder ends it", async () => {
    const turns = new MergeTurns();
    expect(await turns.take("a", 60_000, 0)).toBe(true);
    expect(await turns.take("a", 60_000, 0)).toBe(true);
    turns.end("b");
    expect(await turns.take("b", 60_000, 0)).toBe(false);
  });

  it("is taken back from a holder that never ends it", async () => {
    const turns = new MergeTurns();
    expect(await turns.take("a", 1, 0)).toBe(true);
    // Waits out the lost holder's term rather than its own whole wait.
    expect(await turns.take("b", 60_000, 60_000)).toBe(true);
  });
});

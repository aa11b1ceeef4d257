/** The throughput bench's escalation causes: one cause per kind of reason, whatever issue met it. */
import { describe, expect, it } from "vitest";
import { escalationCause, escalations } from "../../bench/escalation-causes.ts";

const edge = (number: number, seq: number, to: string, reason: string | null = null) => ({
  number,
  seq,
  from: "",
  to,
  event: "",
  at: seq,
  reason,
});

describe("the throughput bench's escalation causes", () => {
  it("leaves out what differs from issue to issue: commit ids, branches and paths, numbers", () => {
    expect(
      escalationCause(
        "conveyor/12-bench-3 is at 3f9a1c2d4e5b on the forge, not at the reported head 0a1b2c3d4e5f6789",
      ),
    ).toBe("<path> is at <sha> on the forge, not at the reported head <sha>");
    const behind = (n: number, updates: number) =>
      escalationCause(`the pull request is behind its base #${n} after ${updates} updates (max_updates 20)`);
    expect(behind(3, 20)).toBe(behind(41, 21));
    expect(escalationCause("the pull request conflicts with its base: src/a.js, src/b.js")).toBe(
      "the pull request conflicts with its base: <path>, <path>",
    );
    expect(escalationCause(null)).toBe("(no reason recorded)");
    expect(escalationCause("x ".repeat(200)).length).toBe(160);
  });

  it("counts the issues whose last edge escalated, by cause, most first", () => {
    const { reasons, byCause } = escalations([
      edge(1, 1, "queued"),
      edge(1, 2, "escalated", "merge failed: head out of date"),
      edge(2, 2, "escalated", "CI still red after 3 fix attempts (max_ci_fixes 3)"),
      edge(2, 1, "queued"),
      edge(3, 1, "escalated", "CI still red after 4 fix attempts (max_ci_fixes 4)"),
      // Escalated, then retried and merged: not an escalated issue.
      edge(4, 1, "escalated", "merge failed: head out of date"),
      edge(4, 2, "merged"),
      edge(5, 1, "escalated"),
    ]);
    expect([...reasons.keys()].sort()).toEqual([1, 2, 3, 5]);
    expect(byCause).toEqual([
      ["CI still red after <n> fix attempts (max_ci_fixes <n>)", 2],
      ["(no reason recorded)", 1],
      ["merge failed: head out of date", 1],
    ]);
  });
});

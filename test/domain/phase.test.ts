import { describe, expect, it } from "vitest";
import {
  MAX_INVALID_LINE_CHARS,
  MAX_REASON_CHARS,
  PHASES,
  type PhaseSignal,
  parsePhaseFile,
  underspecifiedReason,
} from "../../src/domain/phase.ts";

describe("parsePhaseFile", () => {
  it.each<[string, string | null, PhaseSignal]>([
    ["missing file", null, { kind: "dry_exit" }],
    ["empty file", "", { kind: "dry_exit" }],
    ["only whitespace", "  \n\t\r\n  ", { kind: "dry_exit" }],
    ["only a BOM", "\uFEFF", { kind: "dry_exit" }],
    ["BOM and newlines", "\uFEFF\n\n", { kind: "dry_exit" }],
  ])("%s is a dry exit", (_name, text, expected) => {
    expect(parsePhaseFile(text)).toEqual(expected);
  });

  it.each(PHASES)("reads PHASE:%s", (phase) => {
    expect(parsePhaseFile(`PHASE:${phase}\n`)).toEqual({ kind: "phase", phase });
  });

  it.each<[string, string, PhaseSignal]>([
    ["no trailing newline", "PHASE:done", { kind: "phase", phase: "done" }],
    ["surrounding spaces and tabs", " \tPHASE:awaiting_ci \t\n", { kind: "phase", phase: "awaiting_ci" }],
    [
      "CRLF",
      "PHASE:awaiting_review\r\nReason: ok\r\n",
      { kind: "phase", phase: "awaiting_review", reason: "ok" },
    ],
    [
      "lone CR",
      "PHASE:failed\rReason: tests broke",
      { kind: "phase", phase: "failed", reason: "tests broke" },
    ],
    ["UTF-8 BOM", "\uFEFFPHASE:done\n", { kind: "phase", phase: "done" }],
    ["BOM and CRLF", "\uFEFFPHASE:escalate\r\n", { kind: "phase", phase: "escalate" }],
  ])("tolerates %s", (_name, text, expected) => {
    expect(parsePhaseFile(text)).toEqual(expected);
  });

  it.each<[string, string, string]>([
    ["lower-case keyword", "phase:done", "phase:done"],
    ["mixed-case keyword", "Phase:done", "Phase:done"],
    ["upper-case phase", "PHASE:DONE", "PHASE:DONE"],
    ["space after the colon", "PHASE: done", "PHASE: done"],
    ["space before the colon", "PHASE :done", "PHASE :done"],
    ["suffix on a phase", "PHASE:awaiting_ci_extra", "PHASE:awaiting_ci_extra"],
    ["prefix of a phase", "PHASE:awaiting", "PHASE:awaiting"],
    ["unknown phase", "PHASE:merged", "PHASE:merged"],
    ["no phase", "PHASE:", "PHASE:"],
    ["trailing text", "PHASE:done because", "PHASE:done because"],
    ["two phases", "PHASE:done PHASE:failed", "PHASE:done PHASE:failed"],
    ["markdown around it", "`PHASE:done`", "`PHASE:done`"],
    ["prose", "I am done now.", "I am done now."],
    ["BOM not at the start", "\n\uFEFFPHASE:done", ""],
  ])("rejects %s", (_name, text, line) => {
    expect(parsePhaseFile(text)).toEqual({ kind: "invalid", line });
  });

  it("reads the first line only", () => {
    expect(parsePhaseFile("\nPHASE:done\n")).toEqual({ kind: "invalid", line: "" });
    expect(parsePhaseFile("Working on it\nPHASE:done\n")).toEqual({ kind: "invalid", line: "Working on it" });
    expect(parsePhaseFile("PHASE:failed\nPHASE:done\n")).toEqual({ kind: "phase", phase: "failed" });
  });

  it.each<[string, string, string | undefined]>([
    ["on the second line", "PHASE:escalate\nReason: needs a secret\n", "needs a secret"],
    ["after other lines", "PHASE:escalate\nsummary\n\nReason: flaky build\n", "flaky build"],
    ["first of several", "PHASE:escalate\nReason: one\nReason: two\n", "one"],
    ["indented and padded", "PHASE:escalate\n   Reason:   spaced out  \n", "spaced out"],
    ["lower-case label", "PHASE:escalate\nreason: lower\n", "lower"],
    ["upper-case label", "PHASE:escalate\nREASON: upper\n", "upper"],
    ["no space after the label", "PHASE:escalate\nReason:tight\n", "tight"],
    ["colons inside", "PHASE:escalate\nReason: exit: 1: boom\n", "exit: 1: boom"],
    ["empty reason", "PHASE:escalate\nReason:   \n", undefined],
    ["label without colon", "PHASE:escalate\nReason because\n", undefined],
    ["label mid-line", "PHASE:escalate\nThe Reason: x\n", undefined],
    ["none", "PHASE:escalate\nall good\n", undefined],
  ])("reason %s", (_name, text, reason) => {
    const expected: PhaseSignal =
      reason === undefined
        ? { kind: "phase", phase: "escalate" }
        : { kind: "phase", phase: "escalate", reason };
    expect(parsePhaseFile(text)).toStrictEqual(expected);
  });

  it("takes a reason with any phase", () => {
    expect(parsePhaseFile("PHASE:done\nReason: trivial")).toEqual({
      kind: "phase",
      phase: "done",
      reason: "trivial",
    });
  });

  it("reads the older PHASE:needs_human as escalate, with its reason", () => {
    expect(parsePhaseFile("PHASE:needs_human\nReason: which database?\n")).toEqual({
      kind: "phase",
      phase: "escalate",
      reason: "which database?",
    });
    expect(parsePhaseFile("\uFEFFPHASE:needs_human\r\n")).toEqual({ kind: "phase", phase: "escalate" });
  });

  it.each([
    "PHASE:NEEDS_HUMAN",
    "PHASE:needs-human",
    "PHASE:needs_human_now",
    "PHASE:constructor",
    "PHASE:toString",
    "PHASE:__proto__",
  ])("keeps the alias exact: %s is invalid", (line) => {
    expect(parsePhaseFile(line)).toEqual({ kind: "invalid", line });
  });

  it("ignores a Reason: on the first line", () => {
    expect(parsePhaseFile("Reason: x\nPHASE:done")).toEqual({ kind: "invalid", line: "Reason: x" });
  });

  it("bounds the reason", () => {
    const signal = parsePhaseFile(`PHASE:failed\nReason: ${"x".repeat(10_000)}\n`);
    expect(signal.kind === "phase" && signal.reason).toBe(`${"x".repeat(MAX_REASON_CHARS - 1)}…`);
  });

  it("keeps a reason of exactly the bound", () => {
    const reason = "y".repeat(MAX_REASON_CHARS);
    expect(parsePhaseFile(`PHASE:failed\nReason: ${reason}`)).toEqual({
      kind: "phase",
      phase: "failed",
      reason,
    });
  });

  it("never splits a surrogate pair when bounding", () => {
    const signal = parsePhaseFile(`PHASE:failed\nReason: ${"a".repeat(MAX_REASON_CHARS - 2)}😀😀`);
    const reason = signal.kind === "phase" ? (signal.reason ?? "") : "";
    expect(reason).toBe(`${"a".repeat(MAX_REASON_CHARS - 2)}…`);
    expect(reason.length).toBeLessThanOrEqual(MAX_REASON_CHARS);
  });

  it("bounds the echoed line of an invalid file", () => {
    const signal = parsePhaseFile(`PHASE:${"z".repeat(5_000)}`);
    expect(signal.kind).toBe("invalid");
    expect(signal.kind === "invalid" && signal.line.length).toBe(MAX_INVALID_LINE_CHARS);
  });
});

describe("underspecifiedReason", () => {
  it.each<[string | undefined, string | null]>([
    ["underspecified: which endpoint?", "which endpoint?"],
    ["Underspecified:   split it in two  ", "split it in two"],
    ["UNDERSPECIFIED:no acceptance criteria", "no acceptance criteria"],
    ["  underspecified : spaced", "spaced"],
    ["underspecified:", "no details given"],
    ["underspecified:\n", "no details given"],
    ["underspecified", null],
    ["the issue is underspecified: really", null],
    ["needs a secret", null],
    ["", null],
    [undefined, null],
  ])("%j → %j", (reason, expected) => {
    expect(underspecifiedReason(reason)).toBe(expected);
  });
});

import { describe, expect, it } from "vitest";
import {
  type ApprovedStep,
  approvalOf,
  type StepTerms,
  stepApproval,
  stepTerms,
} from "../../src/formulas/approval.ts";
import { ROTATE_TOKEN } from "../support/rotate-token.ts";

// The formula's hosts and a second secret, for changes to show in.
const formula = { ...ROTATE_TOKEN, network: ["api.example.com"], secrets: ["DEPLOY_TOKEN", "OTHER_TOKEN"] };
const [rotate] = formula.steps;
if (!rotate) throw new Error("no step");
const binding = { commit: "c".repeat(40), files: { "rotate.sh": "a".repeat(40) } };
const asked = stepApproval(formula, rotate, binding);
const now = (change: Partial<StepTerms>): StepTerms => ({ ...stepTerms(formula, rotate), ...change });

describe("stepApproval", () => {
  it("holds what a human decides on: the step's command, secrets and output, the formula's hosts, the commit and files", () => {
    expect(asked).toEqual({
      formula: "rotate-token",
      version: "3",
      step: "rotate",
      description: "Revoke the old token",
      command: "./rotate.sh",
      dangerous: true,
      secrets: ["DEPLOY_TOKEN"],
      network: ["api.example.com"],
      output: false,
      commit: binding.commit,
      files: binding.files,
    });
  });
});

describe("approvalOf", () => {
  it("lets the step run as approved, whatever its version, description or list order, with what it bound", () => {
    expect(approvalOf(asked, now({}))).toEqual({ ok: true, binding });
    expect(approvalOf(asked, now({ version: "4", description: "Revoke it" }))).toEqual({ ok: true, binding });
    const twoSecrets = { ...asked, secrets: ["A_TOKEN", "B_TOKEN"], network: ["a.example", "b.example"] };
    const reordered = now({ secrets: ["B_TOKEN", "A_TOKEN"], network: ["b.example", "a.example"] });
    expect(approvalOf(twoSecrets, reordered)).toEqual({ ok: true, binding });
  });

  it.each([
    [{ command: "./rotate.sh && ./exfiltrate.sh" }, "its command"],
    [{ command: null }, "its command"],
    [{ secrets: ["DEPLOY_TOKEN", "OTHER_TOKEN"] }, "its secrets"],
    [{ secrets: [] }, "its secrets"],
    [{ output: true }, "whether its output is shown"],
    [{ network: ["api.example.com", "evil.example"] }, "the formula's network hosts"],
    [
      { command: "./other.sh", secrets: [], network: [] },
      "its command, its secrets, the formula's network hosts",
    ],
  ])("refuses a step changed since: %j", (change, what) => {
    expect(approvalOf(asked, now(change))).toEqual({
      ok: false,
      reason: `step rotate of formula rotate-token changed since the vault approved it (v3): ${what}`,
    });
  });

  it("refuses an approval of another step or formula", () => {
    expect(approvalOf(asked, now({ step: "cleanup" }))).toEqual({
      ok: false,
      reason:
        "the vault approved step rotate of formula rotate-token, not step cleanup of formula rotate-token",
    });
    expect(approvalOf(asked, now({ formula: "other" }))).toEqual({
      ok: false,
      reason: "the vault approved step rotate of formula rotate-token, not step rotate of formula other",
    });
  });

  it("refuses an item asked before approvals bound a commit and files, and reads its missing output as off", () => {
    const { commit: _commit, files: _files, output: _output, ...older } = asked;
    expect(approvalOf(older, now({}))).toEqual({
      ok: false,
      reason:
        "the vault approved step rotate of formula rotate-token without the commit and files it runs (an item asked before Conveyor bound them)",
    });
    expect(approvalOf({ ...older, commit: binding.commit, files: {} }, now({}))).toEqual({
      ok: true,
      binding: { commit: binding.commit, files: {} },
    });
  });

  it("refuses a payload that is not a formula step's", () => {
    const bad: unknown[] = [null, "x", { branches: ["a"] }, { ...asked, command: 7 }];
    bad.push({ ...asked, commit: "not-a-sha" }, { ...asked, files: { "a.sh": "nope" } } as ApprovedStep);
    for (const payload of bad) {
      expect(approvalOf(payload, now({}))).toEqual({
        ok: false,
        reason: "the vault item does not describe a formula step",
      });
    }
  });
});

import { describe, expect, it } from "vitest";
import { type ApprovedStep, changedSinceApproval, stepApproval } from "../../src/formulas/approval.ts";
import { ROTATE_TOKEN } from "../support/rotate-token.ts";

// The formula's hosts and a second secret, for changes to show in.
const formula = { ...ROTATE_TOKEN, network: ["api.example.com"], secrets: ["DEPLOY_TOKEN", "OTHER_TOKEN"] };
const [rotate] = formula.steps;
if (!rotate) throw new Error("no step");
const asked = stepApproval(formula, rotate);
const now = (change: Partial<ApprovedStep>): ApprovedStep => ({ ...asked, ...change });

describe("stepApproval", () => {
  it("holds what a human decides on: the step's command and secrets, the formula's hosts", () => {
    expect(asked).toEqual({
      formula: "rotate-token",
      version: "3",
      step: "rotate",
      description: "Revoke the old token",
      command: "./rotate.sh",
      dangerous: true,
      secrets: ["DEPLOY_TOKEN"],
      network: ["api.example.com"],
    });
  });
});

describe("changedSinceApproval", () => {
  it("lets the step run as approved, whatever its version, description or list order", () => {
    expect(changedSinceApproval(asked, asked)).toBeNull();
    expect(changedSinceApproval(asked, now({ version: "4", description: "Revoke it" }))).toBeNull();
    const twoSecrets = now({ secrets: ["A_TOKEN", "B_TOKEN"], network: ["a.example", "b.example"] });
    const reordered = now({ secrets: ["B_TOKEN", "A_TOKEN"], network: ["b.example", "a.example"] });
    expect(changedSinceApproval(twoSecrets, reordered)).toBeNull();
  });

  it.each([
    [{ command: "./rotate.sh && ./exfiltrate.sh" }, "its command"],
    [{ command: null }, "its command"],
    [{ secrets: ["DEPLOY_TOKEN", "OTHER_TOKEN"] }, "its secrets"],
    [{ secrets: [] }, "its secrets"],
    [{ network: ["api.example.com", "evil.example"] }, "the formula's network hosts"],
    [
      { command: "./other.sh", secrets: [], network: [] },
      "its command, its secrets, the formula's network hosts",
    ],
  ])("refuses a step changed since: %j", (change, what) => {
    expect(changedSinceApproval(asked, now(change))).toBe(
      `step rotate of formula rotate-token changed since the vault approved it (v3): ${what}`,
    );
  });

  it("refuses an approval of another step or formula", () => {
    expect(changedSinceApproval(asked, now({ step: "cleanup" }))).toBe(
      "the vault approved step rotate of formula rotate-token, not step cleanup of formula rotate-token",
    );
    expect(changedSinceApproval(asked, now({ formula: "other" }))).toBe(
      "the vault approved step rotate of formula rotate-token, not step rotate of formula other",
    );
  });

  it("refuses a payload that is not a formula step's", () => {
    for (const payload of [null, "x", { branches: ["a"] }, { ...asked, command: 7 }]) {
      expect(changedSinceApproval(payload, asked)).toBe("the vault item does not describe a formula step");
    }
  });
});

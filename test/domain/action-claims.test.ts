import { describe, expect, it } from "vitest";
import { type ActionFacts, checkActionClaim, type StepItem } from "../../src/domain/action-claims.ts";
import type { FormulaStep } from "../../src/formulas/formula.ts";

const step = (id: string, patch: Partial<FormulaStep> = {}): FormulaStep => ({
  id,
  description: id,
  command: `./${id}.sh`,
  dangerous: false,
  optional: false,
  secrets: [],
  ...patch,
});

const formula = {
  name: "rotate-token",
  steps: [
    step("check"),
    step("rotate", { dangerous: true, secrets: ["DEPLOY_TOKEN"] }),
    step("purge", { dangerous: true, optional: true }),
    step("report", { command: undefined }),
  ],
};
const facts = (items: StepItem[], missingSecrets: string[] = []): ActionFacts => ({
  formula,
  items,
  missingSecrets,
});
const done = { phase: "done" };
const DID_NOT_RUN =
  "the session said the action is done, but step rotate of formula rotate-token did not run";

describe("checkActionClaim", () => {
  it("done stands once every required dangerous step fired; an optional one may not have run", () => {
    const items: StepItem[] = [
      { id: "v1", step: "rotate", state: "approved" },
      { id: "v2", step: "rotate", state: "fired" },
    ];
    expect(checkActionClaim(done, facts(items))).toBeNull();
  });

  it.each<[string, StepItem[], string[], string]>([
    ["never asked", [], [], "the session never asked the vault for it (PHASE:vault, Step: rotate)"],
    [
      "approved, never fired, a secret missing",
      [{ id: "v3", step: "rotate", state: "approved" }],
      ["DEPLOY_TOKEN"],
      "vault item v3 approved it, but it never fired; the project lacks the secret DEPLOY_TOKEN it needs (actionSecrets)",
    ],
    ["still pending", [{ id: "v4", step: "rotate", state: "pending" }], [], "its vault item v4 is pending"],
    [
      "rejected, then approved and not fired",
      [
        { id: "v5", step: "rotate", state: "rejected" },
        { id: "v6", step: "rotate", state: "approved" },
      ],
      [],
      "vault item v6 approved it, but it never fired",
    ],
    ["another step fired", [{ id: "v7", step: "purge", state: "fired" }], [], "the session never asked"],
  ])("done with the required step %s does not stand", (_name, items, missing, why) => {
    expect(checkActionClaim(done, facts(items, missing))).toContain(`${DID_NOT_RUN}: ${why}`);
  });

  it("a vault claim must name one of the formula's dangerous steps", () => {
    expect(checkActionClaim({ phase: "vault", step: "rotate" }, facts([]))).toBeNull();
    expect(checkActionClaim({ phase: "vault", step: "check" }, facts([]))).toBe(
      "the session asked the vault for step check of formula rotate-token, which is not dangerous: it runs with run_step alone",
    );
    expect(checkActionClaim({ phase: "vault", step: "deploy" }, facts([]))).toBe(
      "the session asked the vault for step deploy, which formula rotate-token does not have",
    );
  });

  it("other phases claim nothing the Worker checks here", () => {
    for (const phase of ["escalate", "failed", "dry_exit"])
      expect(checkActionClaim({ phase }, facts([]))).toBeNull();
  });
});

/**
 * An action session's word checked against what the Worker knows before it is accepted. `PHASE:done` claims
 * the formula is finished: it stands only when every dangerous step the formula requires (each not marked
 * `optional`) fired under a vault approval, since the Worker fires each approval right before its runner runs
 * the step; otherwise the issue escalates, naming the step that did not run and why. `PHASE:vault` claims a
 * step needs the vault: it must be one of the formula's dangerous steps. Pure: the ProjectDO gathers the
 * facts (durable-objects/project/jobs/runner-reports.ts).
 */
import type { FormulaStep } from "../formulas/formula.ts";
import type { VaultState } from "./vault.ts";

/** A vault item an action step of this issue asked for, in the order asked. */
export type StepItem = { id: string; step: string; state: VaultState };

export type ActionFacts = {
  formula: { name: string; steps: readonly FormulaStep[] };
  items: readonly StepItem[];
  /** The formula's secrets the project does not hold (its `actionSecrets`). */
  missingSecrets: readonly string[];
};

/** Why the session's claim does not stand (the escalation's reason), or null when it does. */
export function checkActionClaim(claim: { phase: string; step?: string }, facts: ActionFacts): string | null {
  switch (claim.phase) {
    case "done":
      return unfired(facts);
    case "vault":
      return claim.step ? notDangerous(claim.step, facts) : null;
    default:
      return null;
  }
}

function unfired({ formula, items, missingSecrets }: ActionFacts): string | null {
  for (const step of formula.steps) {
    if (!step.dangerous || step.optional) continue;
    const asked = items.filter((item) => item.step === step.id);
    if (asked.some((item) => item.state === "fired")) continue;
    const why = whyNot(step, asked.at(-1), missingSecrets);
    return `the session said the action is done, but step ${step.id} of formula ${formula.name} did not run: ${why}`;
  }
  return null;
}

function whyNot(step: FormulaStep, last: StepItem | undefined, missingSecrets: readonly string[]): string {
  const lacking = step.secrets.filter((name) => missingSecrets.includes(name));
  const secrets =
    lacking.length > 0
      ? `; the project lacks the secret${lacking.length > 1 ? "s" : ""} ${lacking.join(", ")} it needs (actionSecrets)`
      : "";
  if (!last) return `the session never asked the vault for it (PHASE:vault, Step: ${step.id})${secrets}`;
  if (last.state === "approved") return `vault item ${last.id} approved it, but it never fired${secrets}`;
  return `its vault item ${last.id} is ${last.state}${secrets}`;
}

function notDangerous(id: string, { formula }: ActionFacts): string | null {
  const step = formula.steps.find((s) => s.id === id);
  if (!step) return `the session asked the vault for step ${id}, which formula ${formula.name} does not have`;
  if (!step.dangerous)
    return `the session asked the vault for step ${id} of formula ${formula.name}, which is not dangerous: it runs with run_step alone`;
  return null;
}

/**
 * What a vault approval of an action's dangerous step covers: the step as the formula had it when the vault
 * was asked (its command, its secrets, the formula's hosts). The formula is read from the default branch
 * again when the approved job is queued; a step that changed meanwhile is not the one a human approved, and
 * does not run.
 */
import { z } from "zod";
import type { Formula, FormulaStep } from "./formula.ts";

export const approvedStepSchema = z.object({
  formula: z.string(),
  version: z.string(),
  step: z.string(),
  description: z.string(),
  command: z.string().nullable(),
  dangerous: z.boolean(),
  secrets: z.array(z.string()),
  network: z.array(z.string()),
});

export type ApprovedStep = z.infer<typeof approvedStepSchema>;

/** The vault item's payload for `step` of `formula`: what the human decides on. */
export function stepApproval(formula: Omit<Formula, "guidance">, step: FormulaStep): ApprovedStep {
  return {
    formula: formula.name,
    version: formula.version,
    step: step.id,
    description: step.description,
    command: step.command ?? null,
    dangerous: step.dangerous,
    secrets: step.secrets,
    network: formula.network,
  };
}

/**
 * Null when `current` runs what the vault item `approved` (its payload) approved; otherwise why not, in one
 * line. A new version or description with the same command, secrets and hosts runs the same thing.
 */
export function changedSinceApproval(approved: unknown, current: ApprovedStep): string | null {
  const parsed = approvedStepSchema.safeParse(approved);
  if (!parsed.success) return "the vault item does not describe a formula step";
  const was = parsed.data;
  if (was.formula !== current.formula || was.step !== current.step) {
    const approved = `step ${was.step} of formula ${was.formula}`;
    return `the vault approved ${approved}, not step ${current.step} of formula ${current.formula}`;
  }
  const changed = [
    was.command !== current.command && "its command",
    !sameSet(was.secrets, current.secrets) && "its secrets",
    !sameSet(was.network, current.network) && "the formula's network hosts",
  ].filter((what): what is string => what !== false);
  if (changed.length === 0) return null;
  const step = `step ${current.step} of formula ${current.formula}`;
  return `${step} changed since the vault approved it (v${was.version}): ${changed.join(", ")}`;
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

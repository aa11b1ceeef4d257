/**
 * What a vault approval of an action's dangerous step covers: the step as the formula had it when the vault
 * was asked (its command, its secrets, whether its output is shown, the formula's hosts), the default
 * branch's commit the formula was read at, and the files the command names there by blob id
 * (step-files.ts). The formula is read from the default branch again when the approved job is queued; a
 * step that changed meanwhile is not the one a human approved, and does not run. The runner checks the files
 * against the checkout it is about to run the step from.
 */
import { z } from "zod";
import type { Formula, FormulaStep } from "./formula.ts";
import { OBJECT_ID, type StepFiles, stepFilesSchema } from "./step-files.ts";

/** Where an approved step's files were read: the commit, and the files the command names there. */
export const stepBindingSchema = z.object({ commit: z.string().regex(OBJECT_ID), files: stepFilesSchema });
export type StepBinding = { commit: string; files: StepFiles };

export const approvedStepSchema = z.object({
  formula: z.string(),
  version: z.string(),
  step: z.string(),
  description: z.string(),
  command: z.string().nullable(),
  dangerous: z.boolean(),
  secrets: z.array(z.string()),
  network: z.array(z.string()),
  /** Absent from items asked before the formula could show a step's output: not shown. */
  output: z.boolean().default(false),
  /** Absent from items asked before Conveyor bound an approval to them: such an approval runs nothing. */
  commit: stepBindingSchema.shape.commit.optional(),
  files: stepFilesSchema.optional(),
});

export type ApprovedStep = z.infer<typeof approvedStepSchema>;
/** The step's own terms, as the formula has them at any commit. */
export type StepTerms = Omit<ApprovedStep, "commit" | "files">;

/** The step's terms in `formula`. */
export function stepTerms(formula: Omit<Formula, "guidance">, step: FormulaStep): StepTerms {
  return {
    formula: formula.name,
    version: formula.version,
    step: step.id,
    description: step.description,
    command: step.command ?? null,
    dangerous: step.dangerous,
    secrets: step.secrets,
    network: formula.network,
    output: step.output === true,
  };
}

/** The vault item's payload for `step` of `formula` read at `binding.commit`: what the human decides on. */
export function stepApproval(
  formula: Omit<Formula, "guidance">,
  step: FormulaStep,
  binding: StepBinding,
): ApprovedStep {
  return { ...stepTerms(formula, step), ...binding };
}

/**
 * What the vault item `approved` (its payload) approved of `current`, the step as the formula has it now:
 * its binding when `current` runs what was approved, otherwise why not, in one line. A new version or
 * description with the same command, secrets, output and hosts runs the same thing.
 */
export function approvalOf(
  approved: unknown,
  current: StepTerms,
): { ok: true; binding: StepBinding } | { ok: false; reason: string } {
  const parsed = approvedStepSchema.safeParse(approved);
  if (!parsed.success) return { ok: false, reason: "the vault item does not describe a formula step" };
  const was = parsed.data;
  const step = `step ${current.step} of formula ${current.formula}`;
  if (was.formula !== current.formula || was.step !== current.step) {
    const reason = `the vault approved step ${was.step} of formula ${was.formula}, not ${step}`;
    return { ok: false, reason };
  }
  const changed = [
    was.command !== current.command && "its command",
    !sameSet(was.secrets, current.secrets) && "its secrets",
    was.output !== current.output && "whether its output is shown",
    !sameSet(was.network, current.network) && "the formula's network hosts",
  ].filter((what): what is string => what !== false);
  if (changed.length > 0) {
    const reason = `${step} changed since the vault approved it (v${was.version}): ${changed.join(", ")}`;
    return { ok: false, reason };
  }
  if (was.commit === undefined || was.files === undefined) {
    const reason = `the vault approved ${step} without the commit and files it runs (an item asked before Conveyor bound them)`;
    return { ok: false, reason };
  }
  return { ok: true, binding: { commit: was.commit, files: was.files } };
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

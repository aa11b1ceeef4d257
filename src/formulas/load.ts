/**
 * An action job's formula, read from the repository's default branch through the forge client when the job
 * is queued (as the agent catalog reads `.conveyor/agents/`), so every session of the action runs the formula
 * as the default branch has it then.
 */
import type { Registered } from "../projects/store.ts";
import { fileReaderOf } from "../projects/store.ts";
import type { ActionRun } from "../runner-api/contract.ts";
import { changedSinceApproval, stepApproval } from "./approval.ts";
import { FORMULAS_DIR, findFormula, MAX_FORMULA_FILES, missingSecrets, stepOf } from "./formula.ts";

/**
 * A formula the action cannot run with (missing, malformed, the approved step gone). Shaped as a refusal
 * for good (src/domain/failure.ts): retrying reads the same file, so the effect goes to the dead letter at
 * once and the issue escalates with this message.
 */
export class FormulaProblem extends Error {
  readonly status = 422;
  readonly forgeMessage: string;
  constructor(message: string) {
    super(message);
    this.forgeMessage = message;
  }
}

/**
 * The job's action: the formula `name`, and the step a vault item approved with what the item approved (its
 * payload; null when the item has not approved). Its secrets are added at claim time.
 */
export async function loadActionRun(
  registered: Registered,
  name: string | null,
  approved?: { step: string; item: string; payload: unknown },
): Promise<ActionRun> {
  if (!name) throw new FormulaProblem("the action names no formula");
  const { project } = registered;
  const secrets = await registered.secrets();
  const forge = fileReaderOf(project, secrets);
  const files = await forge.readDirectory(FORMULAS_DIR, project.settings.defaultBranch, MAX_FORMULA_FILES);
  const found = findFormula(files, name);
  if (!found.ok) throw new FormulaProblem(found.error);
  const { guidance, ...formula } = found.formula;
  const lacking = missingSecrets(formula, secrets.actionSecrets);
  if (lacking) throw new FormulaProblem(lacking);
  if (approved) {
    const step = stepOf(formula, approved.step);
    if (!step) throw new FormulaProblem(`the approved step ${approved.step} is no longer in formula ${name}`);
    if (approved.payload === null) {
      throw new FormulaProblem(`vault item ${approved.item} has not approved step ${approved.step}`);
    }
    const changed = changedSinceApproval(approved.payload, stepApproval(formula, step));
    if (changed) throw new FormulaProblem(`${changed}; it does not run without a new approval`);
  }
  return {
    formula,
    guidance,
    approvedStep: approved?.step ?? null,
    approvedItem: approved?.item ?? null,
    secrets: {},
  };
}

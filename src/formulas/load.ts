/**
 * An action job's formula, read from the repository's default branch through the forge client when the job
 * is queued (as the agent catalog reads `.conveyor/agents/`), at the commit the branch points to then: every
 * step of the job runs from a checkout of that commit on the runner, so the formula and the files its steps
 * run are of one commit.
 */
import { type FileReader, fileReaderOf, type ProjectSecrets, type Registered } from "../projects/store.ts";
import type { ActionRun } from "../runner-api/contract.ts";
import { type ApprovedStep, approvalOf, stepApproval, stepTerms } from "./approval.ts";
import {
  FORMULAS_DIR,
  type Formula,
  findFormula,
  MAX_FORMULA_FILES,
  missingSecrets,
  stepOf,
} from "./formula.ts";
import { commandPaths } from "./step-files.ts";

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

type ReadFormula = { forge: FileReader; secrets: ProjectSecrets; commit: string; formula: Formula };

/** The formula `name` as the default branch has it now, and the commit it was read at. */
async function readFormula(registered: Registered, name: string | null): Promise<ReadFormula> {
  if (!name) throw new FormulaProblem("the action names no formula");
  const { project } = registered;
  const secrets = await registered.secrets();
  const forge = fileReaderOf(project, secrets);
  const branch = project.settings.defaultBranch;
  const commit = await forge.getBranchHead(branch);
  if (!commit) throw new FormulaProblem(`the default branch ${branch} does not exist`);
  const files = await forge.readDirectory(FORMULAS_DIR, commit, MAX_FORMULA_FILES);
  const found = findFormula(files, name);
  if (!found.ok) throw new FormulaProblem(found.error);
  return { forge, secrets, commit, formula: found.formula };
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
  const { secrets, commit, formula: read } = await readFormula(registered, name);
  const { guidance, ...formula } = read;
  const lacking = missingSecrets(formula, secrets.actionSecrets);
  if (lacking) throw new FormulaProblem(lacking);
  let approval: ActionRun["approval"] = null;
  if (approved) {
    const step = stepOf(formula, approved.step);
    if (!step) throw new FormulaProblem(`the approved step ${approved.step} is no longer in formula ${name}`);
    if (approved.payload === null) {
      throw new FormulaProblem(`vault item ${approved.item} has not approved step ${approved.step}`);
    }
    const found = approvalOf(approved.payload, stepTerms(formula, step));
    if (!found.ok) throw new FormulaProblem(`${found.reason}; it does not run without a new approval`);
    approval = found.binding;
  }
  return {
    formula,
    guidance,
    commit,
    approvedStep: approved?.step ?? null,
    approvedItem: approved?.item ?? null,
    approval,
    secrets: {},
  };
}

/**
 * The vault item's payload for step `id` of the formula `name`: the step as the default branch has it now,
 * the commit, and the blob ids of the files its command names there.
 */
export async function stepApprovalPayload(
  registered: Registered,
  name: string | null,
  id: string,
): Promise<ApprovedStep> {
  const { forge, commit, formula } = await readFormula(registered, name);
  const step = stepOf(formula, id);
  if (!step) throw new FormulaProblem(`formula ${formula.name} has no step ${id}`);
  const ids = await forge.fileIds(commandPaths(step.command ?? ""), commit);
  return stepApproval(formula, step, { commit, files: Object.fromEntries(ids) });
}

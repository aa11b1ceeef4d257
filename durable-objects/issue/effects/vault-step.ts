/**
 * An action's dangerous step becomes an `action_step` item of its project's vault: the step as the formula on
 * the default branch has it now (its command, its secrets' names, its hosts) is what a human decides on. The
 * vault answers with `vault_decision` through the ProjectDO's outbox; its id comes back as `vault_requested`.
 */

import { stepApproval } from "../../../src/formulas/approval.ts";
import { stepOf } from "../../../src/formulas/formula.ts";
import { FormulaProblem, loadActionRun } from "../../../src/formulas/load.ts";
import { projectStub } from "../../../src/project-stub.ts";
import { cachedProject } from "../../../src/projects/cache.ts";
import type { Deliverers } from "./deliverers.ts";

export const VAULT_STEP_DELIVERERS: Deliverers = {
  vault_step: async (effect, ctx) => {
    // Held to awaiting_approval for its step (effect-basis.ts): abandoned, or another step asked since.
    const { issue } = ctx;
    const registered = await cachedProject(ctx.env, issue.project);
    if (!registered) throw new Error(`project ${issue.project} is not registered`);
    const { formula } = await loadActionRun(registered, issue.formula ?? null, undefined);
    const step = stepOf(formula, effect.step);
    if (!step) throw new FormulaProblem(`formula ${formula.name} has no step ${effect.step}`);
    const { id } = await projectStub(ctx.env, issue.project).vaultRequest({
      key: ctx.key,
      kind: "action_step",
      requester: { type: "issue", issue: issue.number, step: step.id },
      title:
        `Run step ${step.id} of formula ${formula.name} (v${formula.version}) for #${issue.number}: ${step.description}`.slice(
          0,
          300,
        ),
      payload: stepApproval(formula, step),
    });
    return { type: "vault_requested", itemId: id };
  },
};

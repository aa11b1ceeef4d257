/**
 * An action's dangerous step becomes an `action_step` item of its project's vault: the step as the formula on
 * the default branch has it now (its command, its secrets' names, its hosts), with the commit it was read at
 * and the files its command names there, is what a human decides on. The vault answers with `vault_decision`
 * through the ProjectDO's outbox; its id comes back as `vault_requested`.
 */

import { stepApprovalPayload } from "../../../src/formulas/load.ts";
import { projectStub } from "../../../src/project-stub.ts";
import { cachedProject } from "../../../src/projects/cache.ts";
import type { Deliverers } from "./deliverers.ts";

export const VAULT_STEP_DELIVERERS: Deliverers = {
  vault_step: async (effect, ctx) => {
    // Held to awaiting_approval for its step (effect-basis.ts): abandoned, or another step asked since.
    const { issue } = ctx;
    const registered = await cachedProject(ctx.env, issue.project);
    if (!registered) throw new Error(`project ${issue.project} is not registered`);
    const payload = await stepApprovalPayload(registered, issue.formula ?? null, effect.step);
    const { id } = await projectStub(ctx.env, issue.project).vaultRequest({
      key: ctx.key,
      kind: "action_step",
      requester: { type: "issue", issue: issue.number, step: payload.step },
      title:
        `Run step ${payload.step} of formula ${payload.formula} (v${payload.version}) for #${issue.number}: ${payload.description}`.slice(
          0,
          300,
        ),
      payload,
    });
    return { type: "vault_requested", itemId: id };
  },
};

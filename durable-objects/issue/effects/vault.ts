/**
 * The lifecycle's vault effects: a held merge becomes a `protected_merge` item of its project's vault, and a
 * human's approval of it (a review, the operator) is the vault's to decide. The vault answers with
 * `vault_decision` through the ProjectDO's outbox. The issue then tells the vault what it did: it acted on the
 * approval (the item fires), or it stopped waiting on the item (withdrawn, so nobody approves it for nothing).
 */
import { projectStub } from "../../../src/project-stub.ts";
import type { Deliverers } from "./deliverers.ts";

export const VAULT_DELIVERERS: Deliverers = {
  vault_request: async (effect, ctx) => {
    const { issue } = ctx;
    // Held to awaiting_approval at its head (effect-basis.ts): approved or left before the vault heard of it.
    if (!issue.headSha) return undefined;
    const { id } = await projectStub(ctx.env, issue.project).vaultRequest({
      key: ctx.key,
      kind: "protected_merge",
      requester: { type: "issue", issue: issue.number },
      title: `Merge pull request #${issue.prNumber ?? "?"} of #${issue.number} at ${issue.headSha.slice(0, 12)}`,
      payload: { pr: issue.prNumber, headSha: issue.headSha, branch: issue.branch, reason: effect.reason },
    });
    return { type: "vault_requested", itemId: id };
  },

  vault_approve: async (effect, ctx) => {
    const result = await projectStub(ctx.env, ctx.issue.project).vaultDecide(effect.itemId, {
      decision: "approve",
      by: effect.by,
    });
    // Already decided (a rejection or the expiry came first): that decision is the one the issue hears.
    if (!result.ok && result.status === 404) throw new Error(result.error);
    return undefined;
  },

  vault_fired: async (effect, ctx) => {
    await projectStub(ctx.env, ctx.issue.project).vaultSettle(effect.itemId, {
      issue: ctx.issue.number,
      as: "fired",
    });
    return undefined;
  },

  vault_withdraw: async (effect, ctx) => {
    await projectStub(ctx.env, ctx.issue.project).vaultSettle(effect.itemId, {
      issue: ctx.issue.number,
      as: "withdrawn",
      reason: effect.reason,
    });
    return undefined;
  },
};

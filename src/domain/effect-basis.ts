/**
 * What an effect was decided on, and whether that still holds when it is delivered. The IssueDO writes each
 * effect to its outbox with the state, head and vault item of the edge that caused it; an effect that acts
 * for that moment only (a merge of the reviewed head, the critic's review, a vault request) is dropped, with
 * its reason recorded, once the issue has moved on: a retry, a late delivery or a dead letter sent again acts
 * on what was decided, never on whatever the issue holds by then. Pure.
 */
import type { Effect, IssueContext, State } from "./lifecycle.ts";

/** The issue as the edge that caused an effect left it. */
export type Basis = { state: State; headSha: string | null; vaultItem: string | null };

/** What an effect's re-check reads of the issue now. */
export type IssueNow = {
  state: string;
  headSha: string | null;
  vaultItem: string | null;
  vaultStep?: string | null;
};

export const basisOf = (ctx: IssueContext): Basis => ({
  state: ctx.state,
  headSha: ctx.headSha,
  vaultItem: ctx.vaultItem,
});

/**
 * The state each effect acts in, and what else it is bound to: `head`, the commit it was decided for (the
 * one reviewed, approved, or waited on). A vault approval is bound to its item and a step's request to its
 * step as well. Effects not listed act whatever the issue does next (labels, comments, closing the issue: each
 * says what happened when it happened).
 */
const BOUND: { [K in Effect["kind"]]?: { state: State; head?: true } } = {
  merge: { state: "merging", head: true },
  check_merge: { state: "merging", head: true },
  request_review: { state: "awaiting_review", head: true },
  watch_ci: { state: "awaiting_ci", head: true },
  rerun_ci: { state: "awaiting_ci", head: true },
  vault_request: { state: "awaiting_approval", head: true },
  vault_approve: { state: "awaiting_approval" },
  vault_step: { state: "awaiting_approval" },
};

const short = (sha: string | null) => sha?.slice(0, 12) ?? "no head";

/**
 * Why `effect`, decided on `basis`, must not act on the issue as it is `now`; null when it may. A row written
 * before effects carried their basis is held to its kind's state only.
 */
export function staleEffect(effect: Effect, basis: Basis | undefined, now: IssueNow): string | null {
  const bound = BOUND[effect.kind];
  if (!bound) return null;
  const decided = basis ?? { state: bound.state, headSha: now.headSha, vaultItem: now.vaultItem };
  const at = (s: { state: string; headSha: string | null }) =>
    bound.head ? `${s.state} at ${short(s.headSha)}` : s.state;
  const moved = `it was decided in ${at(decided)}, and the issue is now in ${at(now)}`;
  if (now.state !== decided.state) return moved;
  if (bound.head && now.headSha !== decided.headSha) return moved;
  if (effect.kind === "vault_approve" && now.vaultItem !== effect.itemId) {
    return `it approves vault item ${effect.itemId}, and the issue waits on ${now.vaultItem ?? "none"}`;
  }
  if (effect.kind === "vault_step" && now.vaultStep !== effect.step) {
    return `it asks for step ${effect.step}, and the issue waits on ${now.vaultStep ?? "no step"}`;
  }
  return null;
}

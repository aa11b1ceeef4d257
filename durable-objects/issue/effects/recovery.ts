/**
 * Waiting for a forge that did not answer: effects given up on meanwhile wait for it (src/domain/escalation.ts).
 * The probe asks the forge about the issue, with the outbox's backoff as its schedule (a wait, never a dead
 * letter), until it answers (`forge_recovered`) or the wait is over; then the dead letters are sent again, each
 * back in its lane where it was.
 */
import { FORGE_RECOVERY_WAIT_MS, forgeUnreachable } from "../../../src/domain/escalation.ts";
import { failureOf, waitUntil } from "../../../src/domain/failure.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { type Deliverers, EffectDropped } from "./deliverers.ts";
import { forgeOf } from "./forge.ts";

/**
 * The forge has not answered yet: asked again for as long as the wait lasts (a day), on the failure backoff
 * rather than a poll's, so a forge that is down is asked every few minutes, not every few seconds.
 */
export class ForgeSilent extends Error {
  readonly waiting = true;
  readonly backoff = true;
}

export const RECOVERY_DELIVERERS: Deliverers = {
  probe_forge: async (_effect, ctx) => {
    if (!ctx.issue.recovering) throw new EffectDropped("no effect waits for the forge any more");
    try {
      const { forge } = await forgeOf(ctx);
      await forge.getIssue(ctx.issue.number);
      return { type: "forge_recovered", answered: true };
    } catch (error) {
      // Paced, or told when to come back: the forge answers, but the probe waits its turn.
      if (waitUntil(error) !== null) throw error;
      // A refusal (the issue gone, the token's rights) is an answer: what is sent again meets it.
      if (!forgeUnreachable(failureOf(error))) return { type: "forge_recovered", answered: true };
      if (Date.now() - (ctx.decidedAt ?? Date.now()) >= FORGE_RECOVERY_WAIT_MS)
        return { type: "forge_recovered", answered: false };
      throw new ForgeSilent(`the forge does not answer yet: ${errorMessage(error)}`);
    }
  },
  resend_dead_letters: async (effect, ctx) => {
    if (!ctx.resend) throw new Error("dead letters are sent again by the issue's object only");
    ctx.resend(effect.ids);
    return undefined;
  },
};

/**
 * The issue's side of the project's merge queue (src/domain/merge-queue.ts, ../../project/merge-queue.ts):
 * its merge asks for the turn and waits for it without touching the forge, and every edge that takes the issue
 * off the merge path gives the turn up through the outbox, so that a crash at any point loses no release.
 */
import type { MergeTurn } from "../../../src/contracts/project-object.ts";
import {
  mergeCheckWaits,
  sameTurn,
  turnBoundMs,
  updatesBeforeReview,
} from "../../../src/domain/merge-queue.ts";
import { projectStub } from "../../../src/project-stub.ts";
import type { Project } from "../../../src/projects/store.ts";
import { seqOfEffectKey } from "../event-log.ts";
import { type Deliverers, type EffectContext, EffectDropped } from "./deliverers.ts";

/**
 * Another issue of the project holds the merge turn: the merge waits, polled with backoff only as the safety
 * net, since the project's object tells the issue when the turn is its own (`IssueObject.mergeTurn`).
 */
export class MergeTurnPending extends Error {
  readonly waiting = true;
}

/**
 * Takes the project's merge turn for the issue's merge, or throws while another holds it. A merge that joined
 * and then found the issue moved on (abandoned while it asked) leaves again before it is dropped.
 */
export async function holdMergeTurn(ctx: EffectContext, project: Project): Promise<MergeTurn> {
  const { issue } = ctx;
  const stub = projectStub(ctx.env, issue.project);
  const since = seqOfEffectKey(ctx.key);
  const turn = await stub.joinMergeQueue(issue.number, since, turnBoundMs(project.settings.timeouts));
  const moved = ctx.recheck();
  if (moved) {
    await stub.leaveMergeQueue(issue.number, since);
    throw new EffectDropped(moved);
  }
  if (!turn.holds) {
    const ahead = turn.ahead === 1 ? "1 issue" : `${turn.ahead} issues`;
    throw new MergeTurnPending(`waits for its turn to merge: ${ahead} ahead in the project's merge queue`);
  }
  return turn;
}

/**
 * Asked where the merge writes (its branch's update, the merge itself): true while the issue still holds the
 * turn `held` it got before reading the forge, which takes a while. Lost meanwhile (the backstop's expiry, or its own
 * release once the issue moved on, which drops the merge), it waits for its next turn, and its check is done
 * again then: what it read may be outdated by the merges of the turns in between. What is left is a loss
 * between this answer and the forge's write: the expiry of a bound of hours within one call, after which the
 * next holder's own check still reads the forge before it writes.
 */
export async function confirmMergeTurn(ctx: EffectContext, project: Project, held: MergeTurn): Promise<true> {
  if (!sameTurn(held, await holdMergeTurn(ctx, project)))
    throw new MergeTurnPending(
      "lost its turn to merge while it read the forge: it checks again on its next turn",
    );
  return true;
}

/** Why the merge timer's check waits for now (src/domain/merge-queue.ts), or null to ask the forge. */
export async function waitsForMergeTurn(ctx: EffectContext, project: Project): Promise<string | null> {
  const { issue } = ctx;
  const queue = await projectStub(ctx.env, issue.project).mergeQueue();
  return mergeCheckWaits(queue, issue.number, Date.now(), project.settings.timeouts.merge);
}

/** Whether the review's check updates a branch that is only behind (src/domain/merge-queue.ts). */
export async function updatesBeforeItsReview(ctx: EffectContext): Promise<boolean> {
  const queue = await projectStub(ctx.env, ctx.issue.project).mergeQueue();
  return updatesBeforeReview(queue, ctx.issue.number);
}

export const MERGE_QUEUE_DELIVERERS: Deliverers = {
  leave_merge_queue: async (_effect, ctx) => {
    await projectStub(ctx.env, ctx.issue.project).leaveMergeQueue(ctx.issue.number, seqOfEffectKey(ctx.key));
    return undefined;
  },
};

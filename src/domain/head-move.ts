/**
 * Whose move it was when an issue's branch is found away from its head: the forge's update from the base (its
 * "update branch", or a human who merged the base in by hand) or someone's push. Told by the forge's history,
 * not by timing: an attempt that asked the forge to update and died before recording it finds the branch
 * moved like any later reader. Pure.
 */
import { headCheck } from "./branch.ts";
import type { LifecycleEvent } from "./lifecycle.ts";

/** How many of the base's first parents, from its head back, are read for the update's base commit. */
export const BASE_HISTORY_READS = 10;

/**
 * The base commit the forge's update merged in: `actual` is a merge whose first parent is the head
 * and whose other parent is that base commit. null for anything else (a push, a rewrite, a squash).
 */
export function mergedBaseCommit(claimed: string, parents: readonly string[]): string | null {
  const [first, other, ...more] = parents;
  if (first !== claimed || other === undefined || more.length > 0) return null;
  return other;
}

/** What the readers learned of the branch: its head, and for a merge of the base the base's recent history. */
export interface HeadMove {
  claimed: string;
  /** The branch's head on the forge; null when the branch is gone. */
  actual: string | null;
  /** The parents of `actual`, first first, when it was read. */
  parents?: readonly string[];
  /** The base's head and its first parents back from it, as far as they were read. */
  baseHistory?: readonly string[];
}

/**
 * null while the branch is at the head; `branch_updated` with the new head when it is the base
 * merged into that head (CI and the critic again, as for an update seen at once); else `head_mismatch`.
 */
export function headMove(number: number, move: HeadMove): LifecycleEvent | null {
  const { claimed, actual } = move;
  const mismatch = headCheck(number, claimed, actual);
  if (!mismatch || actual === null) return mismatch;
  const merged = mergedBaseCommit(claimed, move.parents ?? []);
  if (merged !== null && move.baseHistory?.includes(merged))
    return { type: "branch_updated", headSha: actual };
  return mismatch;
}

/**
 * Where an issue's work lives on the forge. The branch is fixed by the issue's number; the head sha a runner
 * reports is a claim, checked against the branch's head as the forge has it. Pure.
 */
import type { LifecycleEvent } from "./lifecycle.ts";

export const issueBranch = (number: number) => `conveyor/${number}`;

/**
 * null: the forge's branch is at the claimed commit; otherwise the event that stops the issue. `seenBy: "ci"`:
 * found by a reader of CI's verdict, which takes the issue to be waiting for CI (the lifecycle holds it to that).
 */
export function headCheck(
  number: number,
  claimed: string,
  actual: string | null,
  seenBy?: "ci",
): LifecycleEvent | null {
  if (actual === claimed) return null;
  return { type: "head_mismatch", branch: issueBranch(number), claimed, actual, ...(seenBy && { seenBy }) };
}

/**
 * What a writer may call on the pacer of its forge token (durable-objects/pacer/): one object per token, so
 * every writer holding it (each issue's object, the project's, the Worker) shares one count.
 */
import type { PacingLimits, WriteKind } from "../domain/forge-pacing.ts";

export type PacerAnswer = { at: number } | { retryAt: number };

export interface PacerObject extends Rpc.DurableObjectBranded {
  /** When a write may go: `at` (counted; wait for it), or not before `retryAt` (nothing counted). */
  acquire(kind: WriteKind, limits: PacingLimits, maxWaitMs: number): Promise<PacerAnswer>;
  /** The forge refused for its rate limit: every write of the token waits until `until`. */
  block(until: number): Promise<void>;
  /** Until when the forge said to wait (0: it did not, or that is over). */
  blockedUntil(): Promise<number>;
}

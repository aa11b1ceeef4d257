/**
 * One merge at a time per project. A merge first checks that the pull request is current with its base (the
 * stay-current gate), then asks the forge to merge. Two issues doing that at once both find the base as it
 * was, and the second merges onto a base its head was never checked against (no CI, no critic on that
 * combination). The forges' merge APIs pin the head, not the base, so Conveyor's own merges take turns: the
 * ProjectDO grants the turn, and the IssueDO's merge effect holds it from its check to the forge's answer.
 *
 * Kept in memory: a ProjectDO that restarts forgets the turn, and the merge that held it is retried by its
 * outbox like any failed delivery. A holder that never ends its turn loses it after `holdMs`.
 */
import { Wakeups } from "../shared/wakeups.ts";

/**
 * A merge's turn lasts its stay-current check (GitHub's update-branch is waited for, about 10 s at most) and
 * the forge's answer, each under the forge client's own timeouts and retries; past this it is taken back.
 */
export const MERGE_TURN_HOLD_MS = 120_000;
/** How long a merge waits for its turn before its outbox tries again later. */
export const MERGE_TURN_WAIT_MS = 30_000;

export class MergeTurns {
  private holder: { key: string; until: number } | null = null;
  private readonly waiters = new Wakeups();

  /**
   * Takes the turn for `key` (an effect's key: its retried delivery takes the turn again), waiting up to
   * `waitMs` for the holder to end or lose it. False if it did not come in time.
   */
  async take(key: string, holdMs: number, waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const now = Date.now();
      const holder = this.holder;
      if (!holder || holder.until <= now || holder.key === key) {
        this.holder = { key, until: now + holdMs };
        return true;
      }
      if (now >= deadline) return false;
      await this.waiters.next(Math.min(deadline, holder.until) - now);
    }
  }

  /** Ends `key`'s turn, if it still holds it; every waiter looks again. */
  end(key: string): void {
    if (this.holder?.key !== key) return;
    this.holder = null;
    this.waiters.wake();
  }
}

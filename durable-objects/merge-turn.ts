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
export class MergeTurns {
  private holder: { key: string; until: number } | null = null;
  private readonly waiters = new Set<() => void>();

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
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(deadline, holder.until) - now);
        this.waiters.add(wake);
      });
    }
  }

  /** Ends `key`'s turn, if it still holds it; every waiter looks again. */
  end(key: string): void {
    if (this.holder?.key !== key) return;
    this.holder = null;
    for (const wake of [...this.waiters]) wake();
  }
}

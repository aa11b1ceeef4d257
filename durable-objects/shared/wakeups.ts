/**
 * Callers waiting for something to change in their object (a claimable job, a merge turn). A change that
 * concerns everyone wakes them all; one new job wakes a few, the longest waiting first: with a fleet's
 * hundreds of long polls on one project, waking them all for each job made every poll answer and every
 * runner claim again for a job only one could take (docs/performance.md, "A fleet on one project").
 */
export class Wakeups {
  /** In the order they began to wait; each with the key it waits as (its runner). */
  private readonly waiters = new Map<() => void, string | undefined>();

  /** Resolves at the next wake that reaches it, or after `ms`. */
  next(ms: number, key?: string): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.set(done, key);
    });
  }

  /** Wakes every waiter. */
  wake(): void {
    for (const waiter of [...this.waiters.keys()]) waiter();
  }

  /** Wakes the `count` longest waiting, those waiting as `first` (a job's affinity runner) before the rest. */
  wakeSome(count: number, first?: string | null): void {
    const all = [...this.waiters];
    const ordered = first
      ? [...all.filter(([, key]) => key === first), ...all.filter(([, key]) => key !== first)]
      : all;
    for (const [waiter] of ordered.slice(0, count)) waiter();
  }
}

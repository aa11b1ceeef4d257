/** Callers waiting for something to change in their object (a claimable job, a merge turn), woken together. */
export class Wakeups {
  private readonly waiters = new Set<() => void>();

  /** Resolves at the next wake, or after `ms`. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/**
 * One delivery run at a time per outbox lane: a caller arriving mid-run waits for that run (which keeps
 * taking rows until none is due) instead of starting a second one that would send the same rows twice.
 */
export class SingleFlight {
  private running: Promise<void> | null = null;

  constructor(private readonly task: () => Promise<void>) {}

  run(): Promise<void> {
    this.running ??= this.task().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Resolves once no run is under way (at once when none is); a run's failure is its caller's to see. */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }
}

/**
 * A value kept for the whole isolate: the Worker's requests and every Durable Object running in it share it.
 * Only settled values are shared, never a load in flight. Each request and each object runs in an I/O context
 * of its own, and a promise of one context's I/O (a D1 read, a fetch) awaited from another is what workerd
 * refuses ("Cannot perform I/O on behalf of a different Durable Object"), or leaves hanging once the context
 * that started it ends. So loads that miss at the same moment each read for themselves, the first to settle
 * is kept, and every later caller is answered from memory without I/O.
 */
export class IsolateCache<V> {
  private readonly entries = new Map<string, { at: number; value: V }>();
  /** Bumped by `delete`: a load that started before it does not put back what it read. */
  private generation = 0;

  /**
   * The value kept for `key` while `fresh` holds for it (given when it was loaded), else `load`'s, kept once it
   * resolves; a rejection is not kept.
   */
  async get(
    key: string,
    load: () => Promise<V>,
    fresh: (kept: { at: number; value: V }) => boolean,
    now = Date.now(),
  ): Promise<V> {
    const kept = this.entries.get(key);
    if (kept && fresh(kept)) return kept.value;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) this.entries.set(key, { at: now, value });
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
    this.generation++;
  }
}

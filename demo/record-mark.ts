/**
 * The watermark of the Worker's D1 record: a moment before which every edge of every issue is in D1.
 *
 * Each issue's object writes an edge to its outbox in the transaction that makes it, stamped with its own
 * clock, and flushes the outbox to D1 on its own. So when an issue's object answers that its D1 outbox is
 * empty, every edge it stamped before it was asked is in D1; an edge it stamps after is stamped no earlier
 * than the question was sent. Asking every issue the forge has (an issue's object exists only for an issue on
 * the forge; one opened after the listing has edges only after it), an issue's mark is the latest question it
 * answered with an empty outbox, and the watermark is the least of them: exact, whatever the load.
 */
import { z } from "zod";
import type { Demo } from "./orchestrator.ts";
import { PROJECT } from "./scenario.ts";

const viewSchema = z.object({
  outbox: z.array(z.object({ channel: z.string(), pending: z.number() })),
});

export class RecordMark {
  readonly #demo: Demo;
  /** Each issue's mark: the latest question it answered with nothing on its way to D1. */
  readonly #marks = new Map<number, number>();
  /** When the last round asked; null before the first. */
  #asked: number | null = null;
  #value = Number.NEGATIVE_INFINITY;

  constructor(demo: Demo) {
    this.#demo = demo;
  }

  /** The watermark as of the last round. */
  get value(): number {
    return this.#value;
  }

  /**
   * Asks every issue again; returns the new watermark. A round that fails (the Worker restarting) leaves the
   * watermark where it was.
   */
  async advance(): Promise<number> {
    const asked = Date.now();
    try {
      const { sample } = this.#demo;
      const listing = await sample.client(sample.accounts.maintainer).listUpdatedSince(null);
      const numbers = [...new Set(listing.items.filter((i) => !i.isPullRequest).map((i) => i.number))];
      const pending = await Promise.all(numbers.map((number) => this.#pendingD1(number)));
      numbers.forEach((number, i) => {
        // Not listed by the last round: opened after it asked, so nothing of it is older than that.
        if (!this.#marks.has(number) && this.#asked !== null) this.#marks.set(number, this.#asked);
        if (pending[i] === 0) this.#marks.set(number, asked);
      });
      this.#asked = asked;
      const marks = numbers.map((number) => this.#marks.get(number) ?? Number.NEGATIVE_INFINITY);
      this.#value = Math.max(this.#value, Math.min(asked, ...marks));
    } catch {
      // The next round asks again.
    }
    return this.#value;
  }

  /** Rows of the D1 outbox not yet written; 0 for an issue Conveyor never heard of. */
  async #pendingD1(number: number): Promise<number> {
    const res = await fetch(`${this.#demo.worker.url}/api/v1/projects/${PROJECT}/issues/${number}`, {
      headers: { authorization: `Bearer ${this.#demo.adminToken}` },
    });
    if (res.status === 404) return 0;
    if (!res.ok) throw new Error(`issue #${number}: ${res.status}`);
    const { outbox } = viewSchema.parse(await res.json());
    return outbox.find((row) => row.channel === "d1")?.pending ?? 0;
  }
}

/**
 * One item's reconciliation kept from the cycle's others: a pull request deleted meanwhile, a 500, an answer
 * of the wrong shape costs that item, not the rest of the project's cycle. Its failure is logged and noted
 * against the numbers the listing showed changed (the cursor waits for them: `afterFailures`); a rate limit, or
 * the token's pacer saying wait, still ends the cycle, whose retry waits as the forge asked.
 */
import { waitUntil } from "../domain/failure.ts";
import { errorMessage } from "../error-message.ts";
import { log } from "../log.ts";

export class ItemFailures {
  /** Numbers whose reads failed, to be read again next cycle. */
  readonly numbers = new Set<number>();
  count = 0;
  private readonly project: string;

  constructor(project: string) {
    this.project = project;
  }

  /** Runs one item's reconciliation; undefined when it failed (noted against `numbers`). */
  async isolate<T>(what: string, numbers: readonly number[], run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run();
    } catch (error) {
      if (waitUntil(error) !== null) throw error;
      this.count++;
      for (const number of numbers) this.numbers.add(number);
      log.warn("not reconciled", { project: this.project, what, error: errorMessage(error) });
      return undefined;
    }
  }
}

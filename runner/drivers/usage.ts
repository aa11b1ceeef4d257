import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import type { Usage } from "../../src/runner-api/contract.ts";

const totalsSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
  usd: z.number(),
});
type Totals = z.infer<typeof totalsSchema>;

const ZERO: Totals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 0 };

/**
 * Turns a session result into this run's consumption. A resumed session's `total_cost_usd` and `modelUsage`
 * carry on from the totals saved in its transcript (checked against the SDK: the second run of a session
 * reports the first run's cost plus its own), so each result is reported as the difference to the totals
 * already reported for that session, kept per session id in `dir`.
 */
export class UsageLedger {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  async consume(result: SDKResultMessage): Promise<Usage> {
    const file = join(this.#dir, `${result.session_id}.json`);
    const before = await readTotals(file);
    const now = totalsOf(result);
    await mkdir(this.#dir, { recursive: true });
    await writeFile(file, JSON.stringify(now));
    const delta = (key: keyof Totals) => Math.max(0, now[key] - before[key]);
    return {
      inputTokens: delta("inputTokens"),
      outputTokens: delta("outputTokens"),
      cacheReadTokens: delta("cacheReadTokens"),
      cacheWriteTokens: delta("cacheWriteTokens"),
      usd: delta("usd"),
      turns: result.num_turns,
    };
  }
}

/** Every model the run used (`modelUsage`: main loop, subagents, compaction), not only the main loop. */
function totalsOf(result: SDKResultMessage): Totals {
  const totals = { ...ZERO, usd: result.total_cost_usd };
  for (const model of Object.values(result.modelUsage)) {
    totals.inputTokens += model.inputTokens;
    totals.outputTokens += model.outputTokens;
    totals.cacheReadTokens += model.cacheReadInputTokens;
    totals.cacheWriteTokens += model.cacheCreationInputTokens;
  }
  return totals;
}

async function readTotals(file: string): Promise<Totals> {
  try {
    return totalsSchema.parse(JSON.parse(await readFile(file, "utf8")));
  } catch {
    // Never reported (a new session), or unreadable: count from zero rather than lose the usage.
    return ZERO;
  }
}

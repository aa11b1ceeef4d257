/** What a usage record's spend was for: a runner's session, a model call the Worker made, an agent's run. */
import type Anthropic from "@anthropic-ai/sdk";
import type { Tokens } from "./prices.ts";

export const USAGE_SOURCES = ["session", "critic", "classifier", "reviewer", "agent"] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];

/**
 * One model call Conveyor made itself, outside a runner (the Worker's critic, the vault's classifier): the
 * ProjectDO keeps its spend like a session's, against its issue (`number`; null: the project's alone), the
 * daily cap and the dashboard. `id` names the call: the same id is recorded once, however often it is sent.
 */
export type ModelUsage = {
  id: string;
  number: number | null;
  iteration: number;
  source: Extract<UsageSource, "critic" | "classifier">;
  model: string;
  tokens: Tokens;
};

export const NO_TOKENS: Tokens = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** A Messages API answer's usage as tokens, added to `sum` (a call asked again is paid twice). */
export const addTokens = (sum: Tokens, usage: Anthropic.Usage): Tokens => ({
  inputTokens: sum.inputTokens + usage.input_tokens,
  outputTokens: sum.outputTokens + usage.output_tokens,
  cacheReadTokens: sum.cacheReadTokens + (usage.cache_read_input_tokens ?? 0),
  cacheWriteTokens: sum.cacheWriteTokens + (usage.cache_creation_input_tokens ?? 0),
});

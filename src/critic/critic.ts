/**
 * Runs the critic: one forced `report` tool call through the Messages API, validated with zod. An invalid or
 * missing report is asked for again; after that the caller escalates. It is never read as APPROVE.
 */
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import type { Tokens } from "../usage/prices.ts";
import { addTokens, NO_TOKENS } from "../usage/sources.ts";
import { zodMessage } from "../validation.ts";
import { CRITIC_SYSTEM, type CriticInput, criticPrompt } from "./prompt.ts";
import { type CriticReport, reportSchema } from "./report.ts";

export type CriticConfig = {
  apiKey: string;
  baseURL?: string;
  model: string;
  attempts?: number;
  /** The whole review's deadline, every attempt and the SDK's retries included (`CRITIC_DEADLINE_MS`). */
  deadlineMs?: number;
};

/**
 * However the model answers (slowly, not at all, with retries), a review ends within this: the SDK's own
 * default would allow 10 minutes per request, 3 requests per attempt, 2 attempts.
 */
export const CRITIC_DEADLINE_MS = 8 * 60_000;

/** `usage`: every answer's tokens, an invalid report's too (each is paid for). */
export type CriticResult = ({ ok: true; report: CriticReport } | { ok: false; reason: string }) & {
  usage: Tokens;
};

const REPORT_TOOL = {
  name: "report",
  description: "Your review of the pull request. Call it exactly once.",
  input_schema: z.toJSONSchema(reportSchema) as Anthropic.Tool.InputSchema,
};

export async function runCritic(config: CriticConfig, input: CriticInput): Promise<CriticResult> {
  const client = new Anthropic({ apiKey: config.apiKey, baseURL: config.baseURL, maxRetries: 2 });
  const attempts = config.attempts ?? 2;
  const deadlineMs = config.deadlineMs ?? CRITIC_DEADLINE_MS;
  const deadline = AbortSignal.timeout(deadlineMs);
  let reason = "no attempt made";
  let usage = NO_TOKENS;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let message: Anthropic.Message;
    try {
      message = await client.messages.create(
        {
          model: config.model,
          max_tokens: 8_000,
          system: CRITIC_SYSTEM,
          tools: [REPORT_TOOL],
          tool_choice: { type: "tool", name: REPORT_TOOL.name },
          messages: [{ role: "user", content: criticPrompt(input) }],
        },
        { signal: deadline, timeout: deadlineMs },
      );
    } catch (error) {
      // Past the deadline a person looks (review_failed), rather than the issue waiting on the model.
      if (deadline.aborted)
        return { ok: false, reason: `the critic gave no report within ${deadlineMs / 1000} s`, usage };
      throw error;
    }
    usage = addTokens(usage, message.usage);
    const call = message.content.find((b) => b.type === "tool_use" && b.name === REPORT_TOOL.name);
    if (call?.type !== "tool_use") {
      reason = "the critic gave no report";
      continue;
    }
    const parsed = reportSchema.safeParse(call.input);
    if (!parsed.success) {
      reason = `the critic's report is invalid: ${zodMessage(parsed.error)}`;
      continue;
    }
    return { ok: true, report: parsed.data, usage };
  }
  return { ok: false, reason, usage };
}

import { type Options, query, type SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { Driver, SessionInput, SessionResult } from "./driver.ts";
import { type AgentEnvSettings, agentEnv } from "./env.ts";
import { continuationPrompt, implementPrompt, recoveryPrompt } from "./prompt.ts";
import type { UsageLedger } from "./usage.ts";

const ALLOWED_TOOLS = ["Bash", "Write", "Edit", "Read", "Glob", "Grep"];
/** What Claude Code answers `resume` with when the session's transcript is not in CLAUDE_CONFIG_DIR. */
const NO_TRANSCRIPT = /No conversation found with session ID/;

export type ClaudeDriverOptions = AgentEnvSettings & { model?: string; usage: UsageLedger };

type Run = { sessionId: string | null; result?: SDKResultMessage; thrown?: unknown };

/**
 * Sessions on the Claude Agent SDK. Every continuation resumes the job's session by id, which keeps the
 * prompt cache warm; when the transcript is gone, a fresh session starts from the pushed branch instead.
 */
export class ClaudeDriver implements Driver {
  readonly #options: ClaudeDriverOptions;

  constructor(options: ClaudeDriverOptions) {
    this.#options = options;
  }

  async run(input: SessionInput): Promise<SessionResult> {
    const { job, log } = input;
    if (job.sessionId) {
      const resumed = await this.#query(input, continuationPrompt(job), job.sessionId);
      if (!isMissingTranscript(resumed)) return outcome(resumed, input.signal);
      log.warn("session transcript missing; starting a fresh session from the branch", {
        sessionId: job.sessionId,
      });
    }
    const prompt =
      job.kind === "implement" && !job.sessionId
        ? implementPrompt(job)
        : recoveryPrompt(job, await input.diffAgainstBase());
    return outcome(await this.#query(input, prompt), input.signal);
  }

  async #query(input: SessionInput, prompt: string, resume?: string): Promise<Run> {
    const { job, log, signal } = input;
    const abortController = new AbortController();
    const abort = () => abortController.abort(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    const options: Options = {
      cwd: input.worktree,
      env: agentEnv(this.#options, input.phaseFile),
      permissionMode: "dontAsk",
      allowedTools: ALLOWED_TOOLS,
      // The repository's own CLAUDE.md and settings; none from the runner's user.
      settingSources: ["project"],
      maxTurns: job.budget.maxTurns,
      maxBudgetUsd: job.budget.usdRemaining,
      abortController,
      stderr: (data) => log.debug("claude stderr", { data }),
      ...(this.#options.model ? { model: this.#options.model } : {}),
      ...(resume ? { resume } : {}),
    };
    const run: Run = { sessionId: null };
    try {
      signal.throwIfAborted();
      for await (const message of query({ prompt, options })) {
        if (message.type === "system" && message.subtype === "init") {
          run.sessionId = message.session_id;
          log.info(resume ? "session resumed" : "session started", { sessionId: run.sessionId });
          input.onSession(run.sessionId);
        } else if (message.type === "result") {
          run.result = message;
          if (run.sessionId !== null)
            input.onUsage(run.sessionId, await this.#options.usage.consume(message));
        }
      }
    } catch (error) {
      // After an error result the SDK throws; the result says more than the exception.
      run.thrown = error;
    } finally {
      signal.removeEventListener("abort", abort);
    }
    return run;
  }
}

function isMissingTranscript(run: Run): boolean {
  return (
    run.sessionId === null &&
    run.result?.subtype === "error_during_execution" &&
    run.result.errors.some((e) => NO_TRANSCRIPT.test(e))
  );
}

function outcome(run: Run, signal: AbortSignal): SessionResult {
  const { result, sessionId } = run;
  if (result === undefined) {
    // Aborted, the SDK throws without a result; a session that got to its result ended on its own.
    signal.throwIfAborted();
    const message = run.thrown instanceof Error ? run.thrown.message : String(run.thrown);
    return {
      sessionId,
      error: { message: `the session ended without a result: ${message}`, retryable: true },
    };
  }
  if (!result.is_error) return { sessionId };
  switch (result.subtype) {
    // An API error (overload, outage) passes; trying again later may well succeed.
    case "success":
      return { sessionId, error: { message: result.result, retryable: true } };
    // Limits of this job's budget: running again would hit them again.
    case "error_max_turns":
    case "error_max_budget_usd":
      return { sessionId, error: { message: result.errors.join("; ") || result.subtype, retryable: false } };
    default:
      return { sessionId, error: { message: result.errors.join("; ") || result.subtype, retryable: true } };
  }
}

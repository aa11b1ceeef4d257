import { type Options, query, type SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { Sandbox } from "../sandbox/session-sandbox.ts";
import type { Driver, SessionInput, SessionResult } from "./driver.ts";
import { agentEnv, sessionPlace } from "./env.ts";
import { continuationPrompt, implementPrompt, recoveryPrompt } from "./prompt.ts";

const ALLOWED_TOOLS = ["Bash", "Write", "Edit", "Read", "Glob", "Grep"];
/** What Claude Code answers `resume` with when the session's transcript is not in CLAUDE_CONFIG_DIR. */
const NO_TRANSCRIPT = /No conversation found with session ID/;

export type ClaudeDriverOptions = { sandbox: Sandbox; model?: string };

type Run = { sessionId: string | null; result?: SDKResultMessage; thrown?: unknown; budgetSpent?: boolean };

/**
 * Sessions on the Claude Agent SDK, each Claude Code process inside the runner's sandbox. Every continuation
 * resumes the job's session by id, which keeps the prompt cache warm; when the transcript is gone, a fresh
 * session starts from the pushed branch instead. Usage comes from the sandbox's model proxy, which also
 * holds the session to its budget: Claude Code's own figures are the agent's to forge.
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
    const run: Run = { sessionId: null };
    const session = await this.#options.sandbox.open(sessionPlace(input), {
      budgetUsd: job.budget.usdRemaining,
      allowedDomains: job.sandbox.allowedDomains,
      onUsage: (usage) => {
        if (run.sessionId !== null) input.onUsage(run.sessionId, usage);
      },
    });
    const abortController = new AbortController();
    const abort = () => abortController.abort(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    const options: Options = {
      cwd: input.worktree,
      env: { ...agentEnv(input), ...session.env },
      permissionMode: "dontAsk",
      allowedTools: ALLOWED_TOOLS,
      // The repository's own .claude/settings.json (hooks, env) only where the project opted in; none of
      // the runner user's. CLAUDE.md is then read by the agent itself (the prompt says so).
      settingSources: job.sandbox.projectSettings ? ["project"] : [],
      maxTurns: job.budget.maxTurns,
      abortController,
      spawnClaudeCodeProcess: ({ command, args, env, signal: kill }) => {
        const child = session.spawn(command, args, { env: definedOnly(env), signal: kill });
        child.stderr?.on("data", (data: Buffer) =>
          log.debug("claude stderr", { data: data.toString("utf8") }),
        );
        return child as ReturnType<NonNullable<Options["spawnClaudeCodeProcess"]>>;
      },
      ...(this.#options.model ? { model: this.#options.model } : {}),
      ...(resume ? { resume } : {}),
    };
    try {
      signal.throwIfAborted();
      for await (const message of query({ prompt, options })) {
        if (message.type === "system" && message.subtype === "init") {
          run.sessionId = message.session_id;
          log.info(resume ? "session resumed" : "session started", { sessionId: run.sessionId });
          input.onSession(run.sessionId);
        } else if (message.type === "result") {
          run.result = message;
        }
      }
    } catch (error) {
      // After an error result the SDK throws; the result says more than the exception.
      run.thrown = error;
    } finally {
      signal.removeEventListener("abort", abort);
      run.budgetSpent = session.budgetRefused;
      await session.close();
    }
    return run;
  }
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
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
  // The proxy refused the model: running again would be refused again.
  if (run.budgetSpent) {
    signal.throwIfAborted();
    return {
      sessionId,
      error: { message: "the session's budget is spent (refused by the model proxy)", retryable: false },
    };
  }
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
      return { sessionId, error: { message: result.errors.join("; ") || result.subtype, retryable: false } };
    default:
      return { sessionId, error: { message: result.errors.join("; ") || result.subtype, retryable: true } };
  }
}

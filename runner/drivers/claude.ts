import { join } from "node:path";
import type { ActionRun, Job, Usage } from "../../src/runner-api/contract.ts";
import { ACTION_SERVER, actionTools } from "../actions/action-tools.ts";
import { actionContinuationPrompt, actionPrompt } from "../actions/prompt.ts";
import { sandboxedStepCommand } from "../actions/step-command.ts";
import { SAFE_OUTPUTS_SERVER, safeOutputs } from "../agents/safe-outputs.ts";
import type { Sandbox } from "../sandbox/session-sandbox.ts";
import { type ClaudeRun, claudeSession } from "./claude-session.ts";
import type { AgentDriver, AgentInput, AgentResult, Driver, SessionInput, SessionResult } from "./driver.ts";
import { agentEnv, sessionPlace } from "./env.ts";
import { continuationPrompt, implementPrompt, recoveryPrompt } from "./prompt.ts";

const ALLOWED_TOOLS = ["Bash", "Write", "Edit", "Read", "Glob", "Grep"];
/** An action session looks around; its steps' commands are run by the runner (run_step), not by it. */
const ACTION_TOOLS = ["Bash", "Read", "Glob", "Grep"];
/** What Claude Code answers `resume` with when the session's transcript is not in CLAUDE_CONFIG_DIR. */
const NO_TRANSCRIPT = /No conversation found with session ID/;

export type ClaudeDriverOptions = { sandbox: Sandbox; model?: string };

/**
 * Sessions on the Claude Agent SDK (claude-session.ts). Every continuation resumes the job's session by id,
 * which keeps the prompt cache warm; when the transcript is gone, a fresh session starts from the pushed
 * branch instead.
 */
export class ClaudeDriver implements Driver, AgentDriver {
  readonly #options: ClaudeDriverOptions;

  constructor(options: ClaudeDriverOptions) {
    this.#options = options;
  }

  /**
   * Only a fresh session's Claude Code starts before its worktree is ready: one that resumes, reads the
   * repository's settings or serves an action's steps reads more of it (or of the runner's) as it starts.
   */
  startsEarly(job: Job): boolean {
    return !job.action && !job.sessionId && !job.sandbox.projectSettings;
  }

  async run(input: SessionInput): Promise<SessionResult> {
    const { ready, ...rest } = input;
    if (ready && !this.startsEarly(input.job)) return this.run({ ...rest, job: await ready });
    const { job, log } = input;
    if (job.action) return this.#action(input, job.action);
    if (job.sessionId) {
      const resumed = await this.#query(input, continuationPrompt(job), job.sessionId);
      if (!isMissingTranscript(resumed)) return outcome(resumed, input.signal);
      log.warn("session transcript missing; starting a fresh session from the branch", {
        sessionId: job.sessionId,
      });
    }
    const prompt = (briefed: Job) =>
      briefed.kind === "implement" && !job.sessionId
        ? implementPrompt(briefed)
        : input.diffAgainstBase().then((diff) => recoveryPrompt(briefed, diff));
    return outcome(await this.#query(input, ready ? ready.then(prompt) : await prompt(job)), input.signal);
  }

  /**
   * An agent run: the definition's read-only tools and its safe-output tools (served here, outside the
   * sandbox), no repository settings (their hooks would run commands the definition did not allow).
   */
  async runAgent(input: AgentInput): Promise<AgentResult> {
    const { job, agent } = input;
    const outputs = safeOutputs(agent.outputs, input.readBacklog);
    let usage: Usage | null = null;
    const run = await claudeSession({
      sandbox: this.#options.sandbox,
      place: { worktree: input.worktree, writable: [input.home], readOnly: input.readOnly },
      prompt: agent.prompt,
      // No phase: an agent run ends by ending; its outputs are what it asked for.
      env: agentEnv({ home: input.home, phaseFile: join(input.home, "PHASE") }),
      allowedTools: [...agent.tools, ...outputs.toolNames],
      mcpServers: { [SAFE_OUTPUTS_SERVER]: outputs.server },
      projectSettings: false,
      allowedDomains: job.sandbox.allowedDomains,
      budgetUsd: job.budget.usdRemaining,
      cacheLifetime: job.promptCacheTtl,
      maxTurns: job.budget.maxTurns,
      model: agent.model ?? this.#options.model,
      signal: input.signal,
      log: input.log,
      onSession: input.onSession,
      onUsage: (sessionId, counted) => {
        usage = counted;
        input.onUsage(sessionId, counted);
      },
      onActivity: input.onActivity,
    });
    const { sessionId, error } = outcome(run, input.signal);
    return { sessionId, outputs: outputs.requests(), usage, ...(error && { error }) };
  }

  /**
   * An action issue's session: the formula's tools (served here, outside the sandbox) and no repository
   * settings. A resumed session whose transcript is gone starts afresh from the formula and the issue.
   */
  async #action(input: SessionInput, action: ActionRun): Promise<SessionResult> {
    const { job, log, steps } = input;
    if (!steps) throw new Error(`action job ${job.id} has no step source`);
    const tools = actionTools({
      action,
      runCommand: sandboxedStepCommand(this.#options.sandbox, steps),
      fileIds: (paths) => steps.fileIds(paths),
      onProgress: (seq, text) => input.onProgress?.(seq, text),
      redact: input.redact ?? ((text) => text),
      fire:
        input.fireStep ??
        (async () => ({ fired: false, reason: "this runner cannot spend a vault approval", retry: false })),
      onStep: (step, exitCode) => log.info("action step ran", { step, exitCode }),
      signal: input.signal,
    });
    const query = (prompt: string, resume?: string) =>
      claudeSession({
        ...this.#session(input, prompt, resume),
        allowedTools: [...ACTION_TOOLS, ...tools.toolNames],
        mcpServers: { [ACTION_SERVER]: tools.server },
        projectSettings: false,
      });
    if (job.sessionId) {
      const resumed = await query(actionContinuationPrompt(job, action), job.sessionId);
      if (!isMissingTranscript(resumed)) return outcome(resumed, input.signal);
      log.warn("action transcript missing; starting a fresh session", { sessionId: job.sessionId });
    }
    return outcome(await query(actionPrompt(job, action)), input.signal);
  }

  #query(input: SessionInput, prompt: string | Promise<string>, resume?: string): Promise<ClaudeRun> {
    return claudeSession({
      ...this.#session(input, prompt, resume),
      allowedTools: ALLOWED_TOOLS,
      projectSettings: input.job.sandbox.projectSettings,
    });
  }

  /** What every session of a job shares: its place, budget, model and reporting. */
  #session(input: SessionInput, prompt: string | Promise<string>, resume: string | undefined) {
    const { job } = input;
    return {
      sandbox: this.#options.sandbox,
      place: sessionPlace(input),
      prompt,
      env: agentEnv(input),
      allowedDomains: job.sandbox.allowedDomains,
      budgetUsd: job.budget.usdRemaining,
      cacheLifetime: job.promptCacheTtl,
      maxTurns: job.budget.maxTurns,
      model: this.#options.model,
      resume,
      signal: input.signal,
      log: input.log,
      onSession: input.onSession,
      onUsage: input.onUsage,
      onActivity: input.onActivity,
    };
  }
}

function isMissingTranscript(run: ClaudeRun): boolean {
  return (
    run.sessionId === null &&
    run.result?.subtype === "error_during_execution" &&
    run.result.errors.some((e) => NO_TRANSCRIPT.test(e))
  );
}

function outcome(run: ClaudeRun, signal: AbortSignal): SessionResult {
  const { result, sessionId } = run;
  // The proxy refused the model: running again would be refused again.
  if (run.budgetSpent) {
    signal.throwIfAborted();
    const message =
      "budget exceeded: the model proxy refused the session's next request (what is left of the budget cannot pay for its worst case)";
    return { sessionId, budgetSpent: true, error: { message, retryable: false } };
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
  if (!result.is_error) {
    const summary = result.subtype === "success" ? result.result.trim() : "";
    return summary ? { sessionId, summary } : { sessionId };
  }
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

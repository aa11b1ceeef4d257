/**
 * The tools of an action session: an in-process MCP server of the runner (outside the sandbox), like the
 * agents' safe outputs.
 *
 * - `progress(text)`: a note for the issue, posted once as a comment by the Worker (a runner event).
 * - `run_step(id)`: the RUNNER runs the step's declared command (step-command.ts) from its own checkout of the
 *   formula's commit, with only that step's secrets and the formula's hosts; the agent never holds a secret.
 *   A step with secrets answers with its exit code only, unless the formula asks for its output (`output:
 *   true`): what it prints could carry a secret in any encoding, which redaction (of every secret value the
 *   job carries, applied to all it is shown) would not catch. A dangerous step runs only under the job's
 *   vault approval for exactly that step, once, and only when the files its command names are, at the
 *   checkout's commit, the ones the approval names: the Worker fires the approval before it runs, and refuses
 *   a second firing (another attempt of the job). Otherwise the agent is told to stop with `PHASE:vault` and
 *   `Step: <id>`.
 */
import { createSdkMcpServer, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { errorMessage } from "../../src/error-message.ts";
import { type FormulaStep, stepOf } from "../../src/formulas/formula.ts";
import { commandPaths, filesChanged, type StepFiles } from "../../src/formulas/step-files.ts";
import type { ActionRun } from "../../src/runner-api/contract.ts";
import type { StepCommand } from "./step-command.ts";

export const ACTION_SERVER = "action";
/** Progress notes per job: a comment each, so a session cannot flood its issue. */
export const MAX_PROGRESS_NOTES = 30;
export const MAX_PROGRESS_CHARS = 2_000;
/** What the agent is shown of a step's output: its end, shorter for a step that held secrets. */
export const MAX_SHOWN_OUTPUT = 16_000;
export const MAX_SHOWN_SECRET_OUTPUT = 2_000;

export type ToolReply = { content: { type: "text"; text: string }[]; isError: boolean };

/**
 * The Worker's answer to a firing: fired (the step may run), refused (it fired already, or the job carries no
 * approval of it), or not had (`retry`: the Worker could not be asked; nothing was spent that the runner
 * knows of, and the Worker refuses a second firing anyway).
 */
export type StepFiring = { fired: true } | { fired: false; reason: string; retry: boolean };

export type ActionToolsOptions = {
  action: ActionRun;
  runCommand: StepCommand;
  /** The regular files among `paths` at the commit the steps run from, by blob id (step-source.ts). */
  fileIds(paths: readonly string[]): Promise<StepFiles>;
  /** A progress note, already redacted, numbered from 1 within the job. */
  onProgress(seq: number, text: string): void;
  /** The runner's own redaction (its tokens, known shapes), applied after the job's secrets. */
  redact(text: string): string;
  /**
   * Spends the job's approval of a dangerous step on the Worker before it runs. The Worker fires the vault
   * item once, so a step a dead runner already ran does not run again.
   */
  fire(id: string): Promise<StepFiring>;
  /** Told of each step run (its id and exit code) for the runner's log; never of its output. */
  onStep?(id: string, exitCode: number | null): void;
  signal: AbortSignal;
};

export type ActionTools = {
  runStep(id: string): Promise<ToolReply>;
  progress(text: string): ToolReply;
  server: ReturnType<typeof createSdkMcpServer>;
  /** Tool names for `allowedTools`. */
  toolNames: string[];
};

export function actionTools(options: ActionToolsOptions): ActionTools {
  const { action } = options;
  const { formula } = action;
  let notes = 0;
  /** The approval is for one run of its step: a second run is a second dangerous act. */
  let approvalSpent = false;

  const redact = (text: string) => options.redact(withoutSecrets(text, Object.values(action.secrets)));

  const runStep = async (id: string): Promise<ToolReply> => {
    const step = stepOf(formula, id);
    if (!step) {
      return reply(`no step "${id}" in formula ${formula.name}; its steps: ${ids(formula.steps)}`, true);
    }
    if (!step.command) {
      return reply(
        `step ${id} has no command for Conveyor to run: it is yours to do; report it with progress`,
        true,
      );
    }
    if (step.dangerous) {
      if (action.approvedStep !== id) return reply(needsVault(id), true);
      if (approvalSpent) {
        return reply(
          `step ${id} already ran under its vault approval; running it again needs another: ${needsVault(id)}`,
          true,
        );
      }
    }
    const missing = step.secrets.filter((name) => !Object.hasOwn(action.secrets, name));
    if (missing.length > 0) {
      return reply(
        `step ${id} needs the project secret${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, which the project does not provide: escalate`,
        true,
      );
    }
    if (step.dangerous) {
      const refused = await approvedFilesRefusal(id, step.command);
      if (refused) return refused;
      const firing = await options.fire(id);
      if (!firing.fired) {
        const next = firing.retry ? "call run_step again in a moment" : needsVault(id);
        return reply(`step ${id} did not run: ${firing.reason}. ${next}`, true);
      }
      approvalSpent = true;
    }
    const secrets = Object.fromEntries(step.secrets.map((name) => [name, action.secrets[name] ?? ""]));
    const result = await options.runCommand({
      command: step.command,
      secrets,
      allowedHosts: formula.network,
      signal: options.signal,
    });
    options.onStep?.(id, result.exitCode);
    const how = result.timedOut
      ? "was stopped: it ran past its time limit"
      : result.exitCode === null
        ? "was killed"
        : `exited with code ${result.exitCode}`;
    const failed = result.exitCode !== 0;
    if (step.secrets.length > 0 && !step.output) {
      return reply(`step ${id} ${how}. It holds secrets: its output is not shown.`, failed);
    }
    const limit = step.secrets.length > 0 ? MAX_SHOWN_SECRET_OUTPUT : MAX_SHOWN_OUTPUT;
    const output = redact(result.output).trimEnd().slice(-limit);
    return reply(
      `step ${id} ${how}.${output ? `\nIts output (the end):\n${output}` : " It printed nothing."}`,
      failed,
    );
  };

  /** The refusal of an approved step whose files are not the ones the vault approved; null when they are. */
  const approvedFilesRefusal = async (id: string, command: string): Promise<ToolReply | null> => {
    const refused = (why: string, next: string) => reply(`step ${id} does not run: ${why}. ${next}`, true);
    if (!action.approval)
      return refused("the job carries no record of the files the vault approved", needsVault(id));
    let current: StepFiles;
    try {
      current = await options.fileIds(commandPaths(command));
    } catch (error) {
      return refused(`its files cannot be read (${errorMessage(error)})`, "Escalate.");
    }
    const changed = filesChanged(action.approval.files, current, action.approval.commit);
    return changed ? refused(changed, needsVault(id)) : null;
  };

  const progress = (text: string): ToolReply => {
    if (notes >= MAX_PROGRESS_NOTES) {
      return reply(`refused: at most ${MAX_PROGRESS_NOTES} progress notes per session`, true);
    }
    const note = redact(text).trim().slice(0, MAX_PROGRESS_CHARS);
    if (note === "") return reply("refused: the note is empty", true);
    notes += 1;
    options.onProgress(notes, note);
    return reply("posted on the issue");
  };

  const tools = [
    tool(
      "run_step",
      `Have Conveyor run a step of formula ${formula.name} (its declared command, with its secrets and network). Steps: ${ids(formula.steps)}.`,
      { id: z.string().max(40) },
      async ({ id }) => runStep(id),
    ),
    tool(
      "progress",
      "Post a short progress note on the issue (one per step done, not a running commentary).",
      { text: z.string().max(MAX_PROGRESS_CHARS) },
      async ({ text }) => progress(text),
    ),
  ];
  return {
    runStep,
    progress,
    server: createSdkMcpServer({ name: ACTION_SERVER, tools, alwaysLoad: true }),
    toolNames: ["run_step", "progress"].map((name) => `mcp__${ACTION_SERVER}__${name}`),
  };
}

const needsVault = (id: string) =>
  `step ${id} is dangerous and needs the vault's approval first. Stop now: write the phase file with the line PHASE:vault and a second line "Step: ${id}", then end the session. Conveyor resumes this session once the vault decides.`;

const ids = (steps: readonly FormulaStep[]) =>
  steps.map((s) => `${s.id}${s.dangerous ? " (dangerous)" : ""}`).join(", ");

/** Every value replaced by `***`, the longest first so that a secret holding another goes whole. */
function withoutSecrets(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of [...values].filter(Boolean).sort((a, b) => b.length - a.length)) {
    out = out.replaceAll(value, "***");
  }
  return out;
}

function reply(text: string, isError = false): ToolReply {
  return { content: [{ type: "text", text }], isError };
}

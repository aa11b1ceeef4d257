import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { z } from "zod";
import { PHASES } from "../../src/domain/phase.ts";
import { JOB_KINDS } from "../../src/runner-api/contract.ts";
import type { Sandbox } from "../sandbox/session-sandbox.ts";
import { sleep } from "../sleep.ts";
import { activityItem } from "./activity.ts";
import type { Driver, SessionInput, SessionResult } from "./driver.ts";
import { agentEnv, sessionPlace } from "./env.ts";

const stepSchema = z.union([
  /** Writes a file, relative to the worktree. */
  z.strictObject({ write: z.string().min(1), content: z.string() }),
  /** Runs a shell command in the worktree with the agent's environment; a non-zero exit ends the session. */
  z.strictObject({ run: z.string().min(1) }),
  /** Writes the phase file. */
  z.strictObject({ phase: z.enum(PHASES), reason: z.string().optional() }),
  /** Waits, as a long model turn would (interruptible). */
  z.strictObject({ sleep: z.number().int().min(0) }),
]);
type Step = z.infer<typeof stepSchema>;

/** `{ "implement": [step, ...], "revise": [...], "resume": [...] }`: the steps of a session, by job kind. */
export const scriptSchema = z.partialRecord(z.enum(JOB_KINDS), z.array(stepSchema));
export type Script = z.infer<typeof scriptSchema>;

/**
 * Deterministic sessions for tests and demos: the steps for the job's kind, their commands run in the
 * worktree inside the same sandbox, with the same scrubbed environment, as a Claude session (no model: no
 * proxy). A continuation keeps the job's session id.
 */
export class ScriptedDriver implements Driver {
  readonly #script: Script;
  readonly #sandbox: Sandbox;

  constructor(script: Script, sandbox: Sandbox) {
    this.#script = script;
    this.#sandbox = sandbox;
  }

  static fromFile(file: string, sandbox: Sandbox): ScriptedDriver {
    let parsed: ReturnType<typeof scriptSchema.safeParse>;
    try {
      parsed = scriptSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    } catch (error) {
      throw new Error(`cannot read the script ${file}: ${(error as Error).message}`);
    }
    if (!parsed.success)
      throw new Error(`bad script ${file}: ${z.prettifyError(parsed.error).replaceAll("\n", " ")}`);
    return new ScriptedDriver(parsed.data, sandbox);
  }

  async run(input: SessionInput): Promise<SessionResult> {
    const { job, signal } = input;
    const sessionId = job.sessionId ?? `scripted-${randomUUID()}`;
    input.onSession(sessionId);
    const steps = this.#script[job.kind] ?? [];
    let turns = 0;
    let error: SessionResult["error"];
    for (const step of steps) {
      signal.throwIfAborted();
      turns++;
      const failure = await this.#step(step, input);
      if (failure) {
        error = { message: failure, retryable: false };
        break;
      }
    }
    signal.throwIfAborted();
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 0, turns };
    input.onUsage(sessionId, usage);
    return error ? { sessionId, error } : { sessionId };
  }

  /** Runs one step; returns why it failed, if it did. */
  async #step(step: Step, input: SessionInput): Promise<string | undefined> {
    if ("write" in step) {
      const file = resolve(input.worktree, step.write);
      const inside = relative(input.worktree, file);
      if (inside.startsWith("..") || isAbsolute(inside)) return `write outside the worktree: ${step.write}`;
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, step.content);
      input.onActivity([activityItem("tool", `Write ${step.write}`)]);
    } else if ("run" in step) {
      input.onActivity([activityItem("tool", `Bash ${step.run}`)]);
      return this.#shell(step.run, input);
    } else if ("phase" in step) {
      const reason = step.reason ? `Reason: ${step.reason}\n` : "";
      await writeFile(input.phaseFile, `PHASE:${step.phase}\n${reason}`);
    } else {
      await sleep(step.sleep, input.signal);
    }
    return undefined;
  }

  #shell(command: string, input: SessionInput): Promise<string | undefined> {
    return new Promise((done) => {
      // Its own process group, so that an abort kills what the command started too.
      const child = this.#sandbox.spawn(sessionPlace(input), "sh", ["-c", command], {
        env: agentEnv(input),
        detached: true,
      });
      child.stdin?.end();
      const kill = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        } catch {
          // The group is gone already.
        }
      };
      input.signal.addEventListener("abort", kill, { once: true });
      let output = "";
      const collect = (chunk: Buffer) => {
        output = (output + chunk.toString("utf8")).slice(-4_000);
      };
      child.stdout?.on("data", collect);
      child.stderr?.on("data", collect);
      child.on("error", (error) => done(error.message));
      child.on("close", (code) => {
        input.signal.removeEventListener("abort", kill);
        input.log.debug("script command", { command, code, output });
        done(
          code === 0 || input.signal.aborted ? undefined : `\`${command}\` exited ${code}: ${output.trim()}`,
        );
      });
    });
  }
}

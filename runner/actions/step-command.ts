/**
 * How the runner (not the agent) runs a formula step's command: in a sandbox of its own, from the job's
 * step source (a read-only checkout of the formula's commit, a fresh HOME, a fresh /tmp), with the step's
 * secrets in its environment (never on a command line: the command text is the formula's), network only to
 * the formula's hosts through the egress proxy, and a deadline. The session's worktree and HOME are not in
 * its sandbox at all.
 */
import { rm } from "node:fs/promises";
import type { Sandbox } from "../sandbox/session-sandbox.ts";
import type { StepSource } from "./step-source.ts";

export type StepCommandInput = {
  command: string;
  /** The step's secrets, by the names the formula gives them; added to the command's environment only. */
  secrets: Readonly<Record<string, string>>;
  /** The formula's network hosts: reachable on port 443 for this command, nothing else. */
  allowedHosts: readonly string[];
  signal: AbortSignal;
};

export type StepCommandResult = {
  /** Null when it was killed (the deadline, the job's end). */
  exitCode: number | null;
  /** stdout and stderr interleaved, at most `MAX_OUTPUT_BYTES` of its end; not yet redacted. */
  output: string;
  timedOut: boolean;
};

export type StepCommand = (input: StepCommandInput) => Promise<StepCommandResult>;

/** A step that runs longer is killed with its sandbox. */
export const STEP_TIMEOUT_MS = 10 * 60_000;
/** What the runner keeps of a step's output: its end, where the outcome usually is. */
export const MAX_OUTPUT_BYTES = 16 * 1024;

/** The proxy variables the sandbox sets for allowed hosts; the model endpoint and its token are not passed on. */
const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"];

/**
 * Step commands in `sandbox`, each in `source`'s checkout with a HOME of its own and nothing of the runner's
 * environment but PATH. The step's sandbox gets no model budget: a step is a script, not a session.
 */
export function sandboxedStepCommand(
  sandbox: Sandbox,
  source: StepSource,
  timeoutMs = STEP_TIMEOUT_MS,
): StepCommand {
  return async ({ command, secrets, allowedHosts, signal }) => {
    const [checkout, home] = await Promise.all([source.checkout(), source.home()]);
    const place = { worktree: checkout, readOnlyWorktree: true, writable: [home], readOnly: source.readOnly };
    const session = await sandbox.open(place, { budgetUsd: 0, allowedDomains: allowedHosts });
    try {
      const proxy = Object.fromEntries(
        Object.entries(session.env).filter(([name]) => PROXY_VARIABLES.includes(name)),
      );
      const deadline = AbortSignal.timeout(timeoutMs);
      const env = { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: home };
      const child = session.spawn("/bin/sh", ["-c", command], {
        env: { ...env, ...proxy, ...secrets },
        signal: AbortSignal.any([signal, deadline]),
      });
      let output = Buffer.alloc(0);
      const keep = (data: Buffer) => {
        output = Buffer.concat([output, data]);
        if (output.length > MAX_OUTPUT_BYTES) output = output.subarray(output.length - MAX_OUTPUT_BYTES);
      };
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      const exitCode = await new Promise<number | null>((resolve) => {
        child.once("error", () => resolve(null));
        child.once("close", (code) => resolve(code));
      });
      signal.throwIfAborted();
      return { exitCode, output: output.toString("utf8"), timedOut: deadline.aborted };
    } finally {
      await session.close();
      await rm(home, { recursive: true, force: true });
    }
  };
}

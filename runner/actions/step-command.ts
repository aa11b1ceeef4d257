/**
 * How the runner (not the agent) runs a formula step's command: in a sandbox of its own in the session's
 * place, with the step's secrets in its environment (never on a command line: the command text is the
 * formula's), network only to the formula's hosts through the egress proxy, and a deadline.
 */
import type { Place, Sandbox } from "../sandbox/session-sandbox.ts";

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
/** What the agent is shown of a step's output: its end, where the outcome usually is. */
export const MAX_OUTPUT_BYTES = 16 * 1024;

/** The proxy variables the sandbox sets for allowed hosts; the model endpoint and its token are not passed on. */
const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"];

/**
 * Step commands in `sandbox` at `place`, with `baseEnv` (PATH, HOME: nothing of the runner's own) under the
 * step's secrets. The step's sandbox gets no model budget: a step is a script, not a session.
 */
export function sandboxedStepCommand(
  sandbox: Sandbox,
  place: Place,
  baseEnv: Readonly<Record<string, string>>,
  timeoutMs = STEP_TIMEOUT_MS,
): StepCommand {
  return async ({ command, secrets, allowedHosts, signal }) => {
    const session = await sandbox.open(place, { budgetUsd: 0, allowedDomains: allowedHosts });
    try {
      const proxy = Object.fromEntries(
        Object.entries(session.env).filter(([name]) => PROXY_VARIABLES.includes(name)),
      );
      const deadline = AbortSignal.timeout(timeoutMs);
      const child = session.spawn("/bin/sh", ["-c", command], {
        env: { ...baseEnv, ...proxy, ...secrets },
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
    }
  };
}

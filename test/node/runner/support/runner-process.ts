import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { track } from "../../../support/children.ts";

export type RunnerProcess = { process: ChildProcess; lines: string[]; exit: Promise<number | null> };

/**
 * `node runner/cli.ts --config <file> [args]` as a child process, its stderr (JSON log lines) kept in `lines`.
 * It inherits the test's environment, where vitest.config.ts allows a root runner (`CONVEYOR_ALLOW_ROOT`).
 */
export function startRunner(
  configFile: string,
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): RunnerProcess {
  const child = spawn(process.execPath, ["runner/cli.ts", "--config", configFile, ...args], {
    cwd: join(import.meta.dirname, "../../../.."),
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  track(child);
  const lines: string[] = [];
  let partial = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    const text = partial + chunk.toString("utf8");
    const complete = text.split("\n");
    partial = complete.pop() ?? "";
    lines.push(...complete);
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { process: child, lines, exit };
}

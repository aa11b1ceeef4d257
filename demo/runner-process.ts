/** One `conveyor-runner` child process with the `claude` driver, configured by a file, logging to a file. */
import { spawn } from "node:child_process";
import { mkdir, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

export type RunnerSettings = {
  workerUrl: string;
  registrationToken: string;
  git: { username: string; token: string };
  anthropic: { baseUrl?: string; apiKey: string };
};

export type RunnerChild = {
  configFile: string;
  logFile: string;
  /** How the runner runs sessions (`bubblewrap`, or `none` if started unsafe), once it has started. */
  sandbox(): Promise<string>;
  stop(): Promise<void>;
};

const STARTED = /"msg":"runner started".*"sandbox":"(\w+)"/;

/** Writes `<dir>/runner.json` (mode 0600: it holds tokens) for `node runner/cli.ts --config <file>`. */
export async function writeRunnerConfig(dir: string, settings: RunnerSettings): Promise<string> {
  await mkdir(dir, { recursive: true });
  const configFile = join(dir, "runner.json");
  const config = {
    ...settings,
    name: "demo-runner",
    workDir: join(dir, "work"),
    driver: "claude",
    concurrency: 2,
    claimWaitMs: 10_000,
    shutdownGraceMs: 5_000,
  };
  await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return configFile;
}

export async function startRunner(dir: string, settings: RunnerSettings): Promise<RunnerChild> {
  const configFile = await writeRunnerConfig(dir, settings);
  const logFile = join(dir, "runner.log");
  const log = await open(logFile, "a");
  // Settings come from the file alone: the environment would win over it (and carry this process's secrets).
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC|CONVEYOR)_/.test(name)),
  );
  const child = spawn(process.execPath, ["runner/cli.ts", "--config", configFile], {
    cwd: ROOT,
    env,
    stdio: ["ignore", log.fd, log.fd],
  });
  // The child has its own copy of the descriptor.
  await log.close();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    configFile,
    logFile,
    async sandbox() {
      for (let waited = 0; waited < 30_000; waited += 100) {
        const started = STARTED.exec(await readFile(logFile, "utf8"));
        if (started?.[1]) return started[1];
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`the runner did not start; see ${logFile}`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}

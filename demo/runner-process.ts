/** One `conveyor-runner` child process with the `claude` driver, configured by a file, logging to a file. */
import { spawn } from "node:child_process";
import { mkdir, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { track } from "../test/support/children.ts";

const ROOT = new URL("../", import.meta.url).pathname;

export type RunnerSettings = {
  workerUrl: string;
  registrationToken: string;
  git: { username: string; token: string };
  anthropic: { baseUrl?: string; apiKey: string };
  /** The runner's name on the Worker ("demo-runner") and its slots (2). */
  name?: string;
  concurrency?: number;
};

export type RunnerChild = {
  configFile: string;
  logFile: string;
  pid: number;
  /** How the runner runs sessions (`bubblewrap`, or `none` if started unsafe), once it has started. */
  sandbox(): Promise<string>;
  stop(): Promise<void>;
  /** SIGKILL, as a crash would: no shutdown, its leases left to expire. Resolves once it has exited. */
  kill(): Promise<void>;
};

const STARTED = /"msg":"runner started".*"sandbox":"(\w+)"/;

/** Writes `<dir>/runner.json` (mode 0600: it holds tokens) for `node runner/cli.ts --config <file>`. */
export async function writeRunnerConfig(dir: string, settings: RunnerSettings): Promise<string> {
  await mkdir(dir, { recursive: true });
  const configFile = join(dir, "runner.json");
  const { name = "demo-runner", concurrency = 2, ...link } = settings;
  const config = {
    ...link,
    name,
    workDir: join(dir, "work"),
    driver: "claude",
    concurrency,
    claimWaitMs: 10_000,
    shutdownGraceMs: 5_000,
    // The demo's own runner, on the machine the demo runs on: as root (a container, CI) it starts anyway, and
    // the runner's log says so (runner/README.md, `allowRoot`); a build host's runner refuses root.
    ...(process.getuid?.() === 0 && { allowRoot: true }),
    // The environment does not reach the runner (below): a load check turned off for this machine (the test
    // suite's and the bench's, which share two cores with much else) is passed on in the file.
    ...(process.env.CONVEYOR_MAX_LOAD_PER_CPU !== undefined && {
      backpressure: { maxLoadPerCpu: Number(process.env.CONVEYOR_MAX_LOAD_PER_CPU) },
    }),
  };
  await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return configFile;
}

/**
 * Writes the config and starts a runner on it. A restart writes the same config again (the work dir keeps
 * its identity and worktrees) and may log to another file (`logName`) to tell the processes apart.
 */
export async function startRunner(
  dir: string,
  settings: RunnerSettings,
  logName = "runner.log",
): Promise<RunnerChild> {
  const configFile = await writeRunnerConfig(dir, settings);
  const logFile = join(dir, logName);
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
  // Its sessions die with it (bubblewrap's --die-with-parent): killed by this process's exit if not stopped.
  track(child);
  // The child has its own copy of the descriptor.
  await log.close();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  return {
    configFile,
    logFile,
    pid: child.pid ?? 0,
    async sandbox() {
      for (let waited = 0; waited < 30_000; waited += 100) {
        const started = STARTED.exec(await readFile(logFile, "utf8"));
        if (started?.[1]) return started[1];
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const last = (await readFile(logFile, "utf8")).trim().split("\n").at(-1) ?? "";
      throw new Error(`the runner did not start (${last.slice(0, 300)}); see ${logFile}`);
    },
    async stop() {
      if (ended()) return;
      child.kill("SIGTERM");
      await exited;
    },
    async kill() {
      if (ended()) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}

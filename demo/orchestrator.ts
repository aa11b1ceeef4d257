/**
 * Starts the whole factory locally: the sample forge, the model (the scripted stand-in, or the real one), the
 * Worker (wrangler dev: local D1 and Durable Objects), the project's registration and webhook, and one
 * runner (or more, for a benchmark). `stop()` ends them in reverse order.
 */
import { join } from "node:path";
import type { Script } from "../test/support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../test/support/model/server.ts";
import { type LocalWorker, startLocalWorker, TEST_ADMIN_TOKEN } from "../test/support/worker.ts";
import { LocalD1 } from "./local-d1.ts";
import { DEMO_SCRIPT } from "./model-script.ts";
import { connectProject, registrationToken } from "./project.ts";
import { type RunnerChild, type RunnerSettings, startRunner } from "./runner-process.ts";
import { type SampleForge, startSampleForge } from "./sample-forge.ts";

/** The stand-in accepts any key; the runner's config and the Worker's critic still need one. */
const STAND_IN_KEY = "sk-ant-demo-stand-in";

export type ModelChoice = { kind: "stand-in" } | { kind: "anthropic"; apiKey: string; baseUrl?: string };

export type Demo = {
  dataDir: string;
  sample: SampleForge;
  worker: LocalWorker;
  /** The scripted stand-in; null when the real model runs. */
  model: ModelStandIn | null;
  /** The runner process now running (a restart replaces it). */
  runner: RunnerChild;
  /** The runners beyond the first (`runners.count`), each with its own config, identity and work dir. */
  otherRunners: RunnerChild[];
  d1: LocalD1;
  adminToken: string;
  /**
   * Starts another runner process on the same config and work dir (its identity, its worktrees), after killing
   * the last one if it still runs; its Worker calls go through `workerUrl` (a proxy) when given. Logs to `logName`.
   */
  restartRunner(options: { logName: string; workerUrl?: string }): Promise<RunnerChild>;
  /**
   * Stops the Worker, runs `whileDown`, and starts it again on the same port and the same persisted state (D1,
   * Durable Objects): webhooks sent meanwhile are lost, as a deploy or an outage would lose them.
   */
  restartWorker(whileDown: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
};

/** `script`: the stand-in's script (the demo's by default); benchmarks bring their own. */
export async function startDemo(options: {
  dataDir: string;
  model: ModelChoice;
  script?: Script;
  /** Project settings beyond the demo's (e.g. `jobs`, `reconcile`). */
  settings?: Record<string, unknown>;
  /** false: the Worker holds no model key (every critic runs on a runner: `critic.runsOn`). */
  workerModel?: boolean;
  /** Where the first runner reaches the Worker (a proxy in front of it), given the Worker's address. */
  runnerWorkerUrl?: (workerUrl: string) => Promise<string>;
  /** What the sample repository holds before Conveyor is connected to it (a history older than Conveyor). */
  history?: (sample: SampleForge) => Promise<void> | void;
  /** Runner processes and each one's slots: one with two by default. */
  runners?: { count: number; concurrency: number };
  /** What the forge's CI runs instead of the sample's `ci.sh` (e.g. `true`: CI answers at once). */
  ciCommand?: string;
}): Promise<Demo> {
  const { dataDir } = options;
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step();
  };
  try {
    const model =
      options.model.kind === "stand-in"
        ? await startModelStandIn({ script: options.script ?? DEMO_SCRIPT })
        : null;
    if (model) stops.push(() => model.close());
    const anthropic =
      options.model.kind === "stand-in"
        ? { baseUrl: model?.url, apiKey: STAND_IN_KEY }
        : { baseUrl: options.model.baseUrl, apiKey: options.model.apiKey };
    const workerOptions = {
      stateDir: join(dataDir, "worker"),
      logFile: join(dataDir, "worker.log"),
      // The critic runs inside the Worker, on the same model as the sessions (unless the Worker has none).
      vars:
        options.workerModel === false
          ? {}
          : {
              ANTHROPIC_API_KEY: anthropic.apiKey,
              ...(anthropic.baseUrl && { ANTHROPIC_BASE_URL: anthropic.baseUrl }),
            },
    };
    const [sample, firstWorker] = await Promise.all([
      startSampleForge({
        dataDir: join(dataDir, "forge"),
        ...(options.ciCommand !== undefined && { ciCommand: options.ciCommand }),
      }),
      startLocalWorker(workerOptions),
    ]);
    let worker = firstWorker;
    stops.push(() => sample.forge.close());
    stops.push(() => worker.stop());
    const port = Number(new URL(worker.url).port);
    const restartWorker = async (whileDown: () => Promise<void>) => {
      await worker.stop();
      await whileDown();
      worker = await startLocalWorker({ ...workerOptions, port });
      demo.worker = worker;
    };
    const d1 = new LocalD1(worker.stateDir);
    stops.push(async () => d1.close());

    await options.history?.(sample);
    const operator = { workerUrl: worker.url, adminToken: TEST_ADMIN_TOKEN };
    await connectProject({
      ...operator,
      forgeApiUrl: sample.forge.apiUrl,
      forgeToken: sample.accounts.conveyor.token,
      ...(options.settings && { settings: options.settings }),
    });
    const runnerDir = join(dataDir, "runner");
    const { count = 1, concurrency } = options.runners ?? {};
    const settings: RunnerSettings = {
      workerUrl: options.runnerWorkerUrl ? await options.runnerWorkerUrl(worker.url) : worker.url,
      registrationToken: await registrationToken(operator),
      git: { username: sample.accounts.runner.login, token: sample.accounts.runner.token },
      anthropic: { apiKey: anthropic.apiKey, ...(anthropic.baseUrl && { baseUrl: anthropic.baseUrl }) },
      ...(concurrency !== undefined && { concurrency }),
    };
    const runner = await startRunner(runnerDir, settings);
    stops.push(() => demo.runner.stop());
    // Each further runner registers with a token of its own (one-time) and keeps its own work dir.
    const otherRunners: RunnerChild[] = [];
    for (let i = 2; i <= count; i++) {
      const other = await startRunner(join(dataDir, `runner-${i}`), {
        ...settings,
        workerUrl: worker.url,
        registrationToken: await registrationToken(operator),
        name: `demo-runner-${i}`,
      });
      otherRunners.push(other);
      stops.push(() => other.stop());
    }
    const restartRunner = async ({ logName, workerUrl }: { logName: string; workerUrl?: string }) => {
      await demo.runner.kill();
      demo.runner = await startRunner(
        runnerDir,
        { ...settings, workerUrl: workerUrl ?? worker.url },
        logName,
      );
      return demo.runner;
    };
    const demo: Demo = {
      dataDir,
      sample,
      worker,
      model,
      runner,
      otherRunners,
      d1,
      adminToken: TEST_ADMIN_TOKEN,
      restartRunner,
      restartWorker,
      stop,
    };
    return demo;
  } catch (error) {
    await stop();
    throw error;
  }
}

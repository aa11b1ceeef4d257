/**
 * The real Worker under Miniflare directly (miniflare-serve.ts), for benchmarks: `wrangler dev` puts a proxy
 * workerd in front of the Worker's, and at a thousand sessions' calls in flight that proxy, not Conveyor, ran
 * out of file descriptors (docs/performance.md). Same bundle, bindings, D1 migrations and persisted state as
 * startLocalWorker, and the same handle: `pid` leads the process group that holds the one workerd.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { end, track } from "./children.ts";
import {
  freePort,
  type LocalWorker,
  localEnv,
  localVars,
  localWorker,
  onFreePorts,
  prepareLocalD1,
} from "./worker.ts";

const SERVE = new URL("./miniflare-serve.ts", import.meta.url).pathname;
const ADDRESS_IN_USE = /Address already in use|EADDRINUSE/;

export async function startMiniflareWorker(
  options: {
    stateParent?: string;
    vars?: Record<string, string>;
    /** Where Miniflare's and workerd's output goes as it comes, besides `logs()`. */
    logFile?: string;
    /** Keep every Durable Object in memory once touched, instead of evicting the idle ones. */
    preventEviction?: boolean;
  } = {},
): Promise<LocalWorker> {
  const stateDir = await mkdtemp(join(options.stateParent ?? tmpdir(), "conveyor-worker-"));
  await prepareLocalD1(stateDir);
  const vars = localVars(options.vars);
  const log = options.logFile ? createWriteStream(options.logFile, { flags: "a", mode: 0o600 }) : null;
  const launch = async () => {
    const port = await freePort();
    const inspectorPort = await freePort();
    const child: ChildProcess = spawn(process.execPath, [SERVE], {
      env: localEnv(),
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    // Its own group (workerd with it): killed whole by a failed start here, or by the teardown of a bench or
    // test that died before its `stop`.
    track(child, { group: true });
    const started = { child, inspectorPort, output: "", url: "" };
    const preventEviction = options.preventEviction ?? false;
    child.stdin?.end(JSON.stringify({ stateDir, port, inspectorPort, vars, preventEviction }));
    const ready = new Promise<string>((resolve, reject) => {
      const collect = (data: Buffer) => {
        started.output += data;
        log?.write(data);
        const url = /^ready (\S+)$/m.exec(started.output)?.[1];
        if (url) resolve(url);
      };
      child.stdout?.on("data", collect);
      child.stderr?.on("data", collect);
      child.once("exit", () => reject(new Error(`miniflare exited: ${started.output}`)));
    });
    const deadline = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`miniflare did not start: ${started.output}`)), 120_000).unref(),
    );
    try {
      started.url = await Promise.race([ready, deadline]);
    } catch (error) {
      end(child);
      throw error;
    }
    return started;
  };
  const worker = await onFreePorts(launch, (error) => ADDRESS_IN_USE.test(String(error))).catch(
    async (error: unknown) => {
      log?.end();
      await rm(stateDir, { recursive: true, force: true });
      throw error;
    },
  );
  return localWorker(worker, stateDir, async () => {
    await new Promise((done) => (log ? log.end(done) : done(undefined)));
    await rm(stateDir, { recursive: true, force: true });
  });
}

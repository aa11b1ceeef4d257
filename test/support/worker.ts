/**
 * Starts the real Worker locally the way `npm run dev` does (wrangler dev, local D1 migrated first, local
 * Durable Objects), in its own state directory, for Node tests, benchmarks and the demo. The migrations run
 * once per set of them (worker-d1.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { end, track } from "./children.ts";
import { migratedD1 } from "./worker-d1.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
// Run by this process's Node (≥ 22 under npm), whatever `node` the PATH would pick.
const WRANGLER = [join(ROOT, "node_modules/wrangler/bin/wrangler.js")];
const OFFLINE = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
  // Wrangler's local observability streams every span of every invocation (each D1 and storage call) to a
  // collector in the same workerd: a dev-only cost that grew with each binding call and hid Conveyor's own.
  X_LOCAL_OBSERVABILITY: "false",
};

export const TEST_ADMIN_TOKEN = "local-admin-token";
export const TEST_SECRETS_KEY = "iTXhRXylyfEooJdlomoGr0kun+hzmNDYN/lst96dk+0=";

export type LocalWorker = {
  url: string;
  stateDir: string;
  /** wrangler's process, the leader of the group that holds its workerd (for benchmarks' CPU figures). */
  pid: number | undefined;
  /** The DevTools inspector wrangler serves for the Worker's isolate (benchmarks' CPU profiles). */
  inspectorPort: number;
  stop(): Promise<void>;
  logs(): string;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

const ADDRESS_IN_USE = /Address already in use/;
const PORT_ATTEMPTS = 3;

/** wrangler dev could not bind its port or its inspector's. */
class PortTaken extends Error {
  constructor(output: string) {
    super(`wrangler dev exited: ${output}`);
  }
}

/** The environment wrangler and the local runtime run in: offline, non-interactive. */
export function localEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ...OFFLINE, CI: "true" };
}

/** The state directory's D1 migrated as `npm run dev` migrates it, then `seedSql` run against it. */
export async function prepareLocalD1(stateDir: string, seedSql?: string): Promise<void> {
  // Its own group, like wrangler dev's: the workerd it starts goes with it.
  const d1 = (dir: string, ...args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [...WRANGLER, "d1", ...args, "DB", "--local", "--persist-to", dir],
        { cwd: ROOT, env: localEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true },
      );
      track(child, { group: true });
      let output = "";
      const keep = (data: Buffer) => {
        output = (output + data).slice(-20_000);
      };
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      child.once("error", reject);
      child.once("close", (code, signal) => {
        end(child);
        if (code === 0) resolve();
        else reject(new Error(`wrangler d1 ${args[0]} failed (${signal ?? code}): ${output}`));
      });
    });
  await migratedD1(stateDir, (dir) => d1(dir, "migrations", "apply"));
  if (seedSql) await d1(stateDir, "execute", "--file", seedSql);
}

/** The local Worker's bindings: the test admin token and secrets key, then the caller's. */
export function localVars(vars: Record<string, string> = {}): Record<string, string> {
  return { CONVEYOR_ADMIN_TOKEN: TEST_ADMIN_TOKEN, CONVEYOR_SECRETS_KEY: TEST_SECRETS_KEY, ...vars };
}

export async function startLocalWorker(
  options: {
    port?: number;
    stateDir?: string;
    /** Where to create the state directory when `stateDir` is not given (removed again on stop). */
    stateParent?: string;
    /** Bindings (the admin token, the model key, …): through an env file, never on wrangler's command line. */
    vars?: Record<string, string>;
    /** Where the Worker's output goes as it comes, besides `logs()`. */
    logFile?: string;
    /** SQL run against the local D1 after the migrations, before the Worker starts (test data). */
    seedSql?: string;
  } = {},
): Promise<LocalWorker> {
  const owned = options.stateDir === undefined;
  const stateDir =
    options.stateDir ?? (await mkdtemp(join(options.stateParent ?? tmpdir(), "conveyor-worker-")));
  await prepareLocalD1(stateDir, options.seedSql);
  const vars = localVars(options.vars);
  const envDir = await mkdtemp(join(tmpdir(), "conveyor-worker-env-"));
  const envFile = join(envDir, "vars.env");
  await writeFile(envFile, envFileText(vars), { mode: 0o600 });
  const log = options.logFile ? createWriteStream(options.logFile, { flags: "a", mode: 0o600 }) : null;
  const launch = async (port: number, inspectorPort: number) => {
    const child: ChildProcess = spawn(
      process.execPath,
      [
        ...WRANGLER,
        "dev",
        "--ip",
        "127.0.0.1",
        "--port",
        String(port),
        // Else every instance probes from 9229, and instances starting together collide.
        "--inspector-port",
        String(inspectorPort),
        "--persist-to",
        stateDir,
        "--show-interactive-dev-session=false",
        "--log-level",
        "warn",
        "--env-file",
        envFile,
      ],
      { cwd: ROOT, env: localEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    // Its own group (workerd with it): killed whole by a failed start here, or by the file's teardown.
    track(child, { group: true });
    const started = { child, port, inspectorPort, url: `http://127.0.0.1:${port}`, output: "" };
    const collect = (data: Buffer) => {
      started.output += data;
      log?.write(data);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    const deadline = Date.now() + 60_000;
    try {
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) {
          if (ADDRESS_IN_USE.test(started.output)) throw new PortTaken(started.output);
          throw new Error(`wrangler dev exited: ${started.output}`);
        }
        const ok = await fetch(`${started.url}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) return started;
        if (Date.now() > deadline) throw new Error(`wrangler dev did not start: ${started.output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } catch (error) {
      end(child);
      throw error;
    }
  };
  // A port the caller chose is its own to keep.
  const worker = await onFreePorts(
    async () => launch(options.port ?? (await freePort()), await freePort()),
    (error) => error instanceof PortTaken && options.port === undefined,
  );
  return localWorker(worker, stateDir, async () => {
    await rm(envDir, { recursive: true, force: true });
    await new Promise((done) => (log ? log.end(done) : done(undefined)));
    if (owned) await rm(stateDir, { recursive: true, force: true });
  });
}

/** The handle of a started runtime: `stop` ends its process group, then cleans up after it. */
export function localWorker(
  started: { child: ChildProcess; url: string; inspectorPort: number; output: string },
  stateDir: string,
  cleanUp: () => Promise<void>,
): LocalWorker {
  const { child, url, inspectorPort } = started;
  return {
    url,
    stateDir,
    pid: child.pid,
    inspectorPort,
    logs: () => started.output,
    stop: async () => {
      await stopGroup(child);
      await cleanUp();
    },
  };
}

/**
 * `launch` again while `taken(error)` says its port was: a free port is free when asked, not when the runtime
 * binds it, and another process may take it in between.
 */
export async function onFreePorts<T>(
  launch: () => Promise<T>,
  taken: (error: unknown) => boolean,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch();
    } catch (error) {
      if (!taken(error) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
}

/** Ends the process group `child` leads (the runtime it started too), once it has exited. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null && child.pid) {
    const exited = new Promise((r) => child.once("exit", r));
    process.kill(-child.pid, "SIGTERM");
    await exited;
  }
  end(child);
}

/** `KEY="value"` lines; a value that such a line cannot carry as it is is refused, not mangled. */
function envFileText(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([key, value]) => {
      if (!/^[A-Z_][A-Z0-9_]*$/.test(key) || /["\\\n\r$]/.test(value))
        throw new Error(`${key}: not a value an env file carries as it is`);
      return `${key}="${value}"\n`;
    })
    .join("");
}

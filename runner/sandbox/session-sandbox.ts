import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Usage } from "../../src/runner-api/contract.ts";
import { bubblewrapArgs, hostSystem, type SystemEntry, spawnBubblewrap } from "./bubblewrap.ts";
import type { CacheLifetime } from "./cache-lifetime.ts";
import { bundledClaudeCode, defaultControllerDir, executeOnlyCopy } from "./controller.ts";
import { EgressProxy } from "./egress-proxy.ts";
import { DEFAULT_MODEL_BASE_URL, ModelProxy } from "./model-proxy.ts";

/** Ports inside the sandbox's own network namespace: no other process of the host can hold them. */
const MODEL_PORT = 41_001;
const EGRESS_PORT = 41_002;
/** init.ts beside this file in the repository, init.js in the package's compiled dist/. */
const INIT = fileURLToPath(
  new URL(`./init${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url),
);
/**
 * Node decides how to load init from the nearest package.json: the repository's own, or in the package
 * dist/package.json (`"type": "module"`, written by the build) — two directories up either way.
 */
const PACKAGE_JSON = fileURLToPath(new URL("../../package.json", import.meta.url));

export type SandboxMode = "bubblewrap" | "none";

export type SandboxSettings = {
  /** `none` only with `--unsafe-no-sandbox`: the session runs as the runner's user, seeing what it sees. */
  mode: SandboxMode;
  /** The upstream and its credential: an API key or a subscription's OAuth token (runner/config.ts). */
  model: { baseUrl?: string; apiKey?: string; oauthToken?: string };
  /** Files of the runner (config, secret files) to hide where the system's view would show them. */
  secretFiles: readonly string[];
  /** The runner's own directory for Claude Code's execute-only copy (controller.ts); default under tmp. */
  controllerDir?: string;
};

/** What a sandboxed process may see of the host besides the system. */
export type Place = {
  /** Its working directory, read-write unless `readOnlyWorktree` (an action step's checkout). */
  worktree: string;
  readOnlyWorktree?: boolean;
  /** Read-write besides the worktree: the agent's HOME (transcripts, git identity), its phase directory. */
  writable: readonly string[];
  /** Read-only: the private repository's objects the worktree borrows. */
  readOnly: readonly string[];
};

export type SessionLimits = {
  budgetUsd: number;
  /** Hosts reachable on port 443 through the egress proxy; none by default. */
  allowedDomains: readonly string[];
  onUsage?: (usage: Usage) => void;
  /** The prompt cache's lifetime the session's requests ask for; 5 minutes when absent. */
  cacheLifetime?: CacheLifetime;
};

export type SpawnOptions = {
  env: Record<string, string>;
  signal?: AbortSignal;
  /** Its own process group, so that the caller can kill what it started too. */
  detached?: boolean;
};
export type Spawn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/**
 * Starts every agent process the runner runs: Claude Code, the scripted driver's commands, and the runner's
 * own git commands in a worktree. Under bubblewrap each one sees the system read-only and only its own
 * session's paths, reaches the model through a proxy that holds the key, and dies with its first process.
 */
export class Sandbox {
  readonly settings: SandboxSettings;
  readonly #system: SystemEntry[];
  readonly #masked: string[];
  #claudeCode: Promise<string> | undefined;

  constructor(settings: SandboxSettings) {
    this.settings = settings;
    this.#system = settings.mode === "bubblewrap" ? hostSystem() : [];
    // Only what the system view would show; bubblewrap cannot mount over a file that is not there.
    const shown = this.#system
      .filter((entry) => entry.symlink === undefined)
      .map((entry) => `${entry.path}/`);
    this.#masked = settings.secretFiles.filter(
      (file) => existsSync(file) && shown.some((prefix) => file.startsWith(prefix)),
    );
  }

  get enabled(): boolean {
    return this.settings.mode === "bubblewrap";
  }

  /** The Claude Code binary sessions run: in the sandbox, its non-dumpable execute-only copy. */
  claudeCode(): Promise<string> {
    if (!this.enabled) return Promise.resolve(bundledClaudeCode());
    this.#claudeCode ??= executeOnlyCopy(
      bundledClaudeCode(),
      this.settings.controllerDir ?? defaultControllerDir(),
    ).catch((error: unknown) => {
      this.#claudeCode = undefined;
      throw error;
    });
    return this.#claudeCode;
  }

  /** Opens a session: its proxies run until `close()`. */
  async open(place: Place, limits: SessionLimits): Promise<SandboxSession> {
    const { apiKey, oauthToken, baseUrl = DEFAULT_MODEL_BASE_URL } = this.settings.model;
    const sessionToken = `conveyor-session-${randomBytes(24).toString("hex")}`;
    const options = {
      upstream: { baseUrl, credential: oauthToken ? { oauthToken } : { apiKey: apiKey ?? "" } },
      sessionToken,
      budgetUsd: limits.budgetUsd,
      ...(limits.onUsage && { onUsage: limits.onUsage }),
      ...(limits.cacheLifetime && { cacheLifetime: limits.cacheLifetime }),
    };
    if (!this.enabled) {
      const model = await ModelProxy.start(options, { port: 0 });
      const env = { ANTHROPIC_BASE_URL: model.url ?? "", ANTHROPIC_API_KEY: sessionToken };
      const direct: Spawn = (command, args, spawnOptions) =>
        spawnDirect(command, args, { ...spawnOptions, cwd: place.worktree });
      return new SandboxSession(model, undefined, undefined, env, { spawn: direct, controller: direct });
    }
    // Short and private: a Unix socket's path is limited to about 100 bytes.
    const sockets = await mkdtemp(join(tmpdir(), "conveyor-"));
    const model = await ModelProxy.start(options, { socket: join(sockets, "model.sock") });
    const forwards = [{ port: MODEL_PORT, socket: join(sockets, "model.sock") }];
    const env: Record<string, string> = {
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${MODEL_PORT}`,
      ANTHROPIC_API_KEY: sessionToken,
    };
    let egress: EgressProxy | undefined;
    if (limits.allowedDomains.length > 0) {
      egress = await EgressProxy.start(limits.allowedDomains, join(sockets, "egress.sock"));
      forwards.push({ port: EGRESS_PORT, socket: join(sockets, "egress.sock") });
      const proxy = `http://127.0.0.1:${EGRESS_PORT}`;
      Object.assign(env, { HTTPS_PROXY: proxy, https_proxy: proxy, HTTP_PROXY: proxy, http_proxy: proxy });
      Object.assign(env, { NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost" });
    }
    const inside = (command: string, args: readonly string[], channel: boolean) => [
      ...bubblewrapArgs(this.#system, this.#mounts(place, [sockets, command])),
      "--",
      process.execPath,
      INIT,
      JSON.stringify({ forwards, command, args, ...(channel && { channel }) }),
    ];
    const spawn: Spawn = (command, args, spawnOptions) =>
      spawnBubblewrap(inside(command, args, false), bubblewrapOptions(spawnOptions, place));
    const controller: Spawn = (command, args, spawnOptions) => {
      const child = spawnBubblewrap(inside(command, args, true), {
        ...bubblewrapOptions(spawnOptions, place),
        stdio: ["ignore", "ignore", "pipe"],
        extra: ["pipe", "pipe"],
      });
      // What the Agent SDK reads and writes: the channel on the descriptors init.ts hands to Claude Code.
      const stdio: readonly unknown[] = child.stdio;
      child.stdin = stdio[4] as Writable;
      child.stdout = stdio[5] as Readable;
      return child;
    };
    return new SandboxSession(model, egress, sockets, env, { spawn, controller });
  }

  /**
   * A command in the session's place without model or network: how the runner runs git in a worktree whose
   * configuration (hooks, filters, fsmonitor) is the agent's.
   */
  spawn(place: Place, command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
    if (!this.enabled) return spawnDirect(command, args, { ...options, cwd: place.worktree });
    const wrapped = [...bubblewrapArgs(this.#system, this.#mounts(place, [])), "--", command, ...args];
    return spawnBubblewrap(wrapped, bubblewrapOptions(options, place));
  }

  #mounts(place: Place, extra: readonly string[]) {
    const binaries = extra.filter((path) => path.startsWith("/") && !this.#inSystem(path));
    const worktree = [place.worktree];
    return {
      writable: [...(place.readOnlyWorktree ? [] : worktree), ...place.writable],
      readOnly: [
        ...(place.readOnlyWorktree ? worktree : []),
        ...place.readOnly,
        ...binaries,
        process.execPath,
        INIT,
        PACKAGE_JSON,
      ],
      masked: this.#masked,
      cwd: place.worktree,
    };
  }

  #inSystem(path: string): boolean {
    return this.#system.some((entry) => path === entry.path || path.startsWith(`${entry.path}/`));
  }
}

/** A session's proxies and its way to start processes inside the sandbox. */
export class SandboxSession {
  readonly #model: ModelProxy;
  readonly #egress: EgressProxy | undefined;
  readonly #sockets: string | undefined;
  /** What the session's environment adds: the model endpoint, its per-session token, the egress proxy. */
  readonly env: Readonly<Record<string, string>>;
  /** A process in the session's sandbox. */
  readonly spawn: Spawn;
  /**
   * The session's controller (Claude Code, the executable `Sandbox.claudeCode()` gives): its stdin and stdout
   * are the Agent SDK's channel, held in the sandbox by it alone.
   */
  readonly spawnController: Spawn;
  /** What the session started and has not seen exit: `close()` stops it and waits for it. */
  readonly #running = new Set<ChildProcess>();
  #closed = false;

  constructor(
    model: ModelProxy,
    egress: EgressProxy | undefined,
    sockets: string | undefined,
    env: Record<string, string>,
    spawners: { spawn: Spawn; controller: Spawn },
  ) {
    this.#model = model;
    this.#egress = egress;
    this.#sockets = sockets;
    this.env = env;
    this.spawn = this.#tracked(spawners.spawn);
    this.spawnController = this.#tracked(spawners.controller);
  }

  #tracked(spawner: Spawn): Spawn {
    return (command, args, options) => {
      // A process started once the session closed would outlive it: a warm start that lost its race.
      if (this.#closed) throw new Error("the session is closed");
      const child = spawner(command, args, options);
      this.#running.add(child);
      child.once("exit", () => this.#running.delete(child));
      child.once("error", () => this.#running.delete(child));
      return child;
    };
  }

  get usage(): Usage {
    return this.#model.usage;
  }

  get budgetRefused(): boolean {
    return this.#model.budgetRefused;
  }

  /**
   * Stops the session: what it started is killed and has exited when this resolves, so nothing of it writes
   * on in the agent's home or worktree once the job has ended (its next attempt, or the test's cleanup, goes
   * there next). Then its proxies close.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#running].map(stopped));
    await Promise.all([this.#model.close(), this.#egress?.close()]);
    if (this.#sockets) await rm(this.#sockets, { recursive: true, force: true });
  }
}

/**
 * Past the Agent SDK's own stop (its close signals Claude Code 2 s after it ended, kills it 5 s later): a
 * process still there is killed.
 */
const STOP_GRACE_MS = 10_000;

/** Waits for the process to exit, killing it past the grace (bubblewrap takes its sandbox with it). */
function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    const done = () => {
      clearTimeout(kill);
      resolve();
    };
    child.once("exit", done);
    child.once("error", done);
  });
}

function bubblewrapOptions(options: SpawnOptions, place: Place) {
  return {
    env: options.env,
    cwd: place.worktree,
    detached: options.detached === true,
    ...(options.signal && { signal: options.signal }),
  };
}

function spawnDirect(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { cwd: string },
): ChildProcess {
  return spawn(command, args, {
    env: options.env,
    cwd: options.cwd,
    stdio: "pipe",
    detached: options.detached === true,
    ...(options.signal && { signal: options.signal }),
  });
}

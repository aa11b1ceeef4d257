import { type ChildProcess, spawn } from "node:child_process";

export type GitOptions = {
  cwd?: string;
  /** Added to the inherited environment; a push's credential travels here and nowhere else. */
  env?: Record<string, string>;
  /**
   * Past this, git and everything it started (remote helpers, the credential helper: its process group) is
   * killed and the call rejects: a remote that stalls must not hold the job's slot forever.
   */
  timeoutMs?: number;
  /** Written to git's standard input, which is then closed. */
  input?: string;
};

export class GitError extends Error {
  readonly args: readonly string[];
  readonly exitCode: number | null;
  readonly stderr: string;
  /** What it wrote before failing: some commands answer through their exit code (`merge-tree`: 1, conflicts). */
  readonly stdout: string;

  constructor(args: readonly string[], exitCode: number | null, stderr: string, stdout = "") {
    const detail = redact(stderr.trim());
    super(`${describe(args)} failed (exit ${exitCode ?? "none"})${detail ? `: ${detail}` : ""}`);
    this.name = "GitError";
    this.args = args;
    this.exitCode = exitCode;
    this.stderr = redact(stderr);
    this.stdout = stdout;
  }
}

// Variables from `git rev-parse --local-env-vars`: inherited from a parent git (the runner started from a hook,
// tests run by a pre-commit hook) they would point every command at someone else's repository or config.
const REPOSITORY_ENV = [
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_CONFIG",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "GIT_OBJECT_DIRECTORY",
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_IMPLICIT_WORK_TREE",
  "GIT_GRAFT_FILE",
  "GIT_INDEX_FILE",
  "GIT_NO_REPLACE_OBJECTS",
  "GIT_REPLACE_REF_BASE",
  "GIT_PREFIX",
  "GIT_INTERNAL_SUPER_PREFIX",
  "GIT_SHALLOW_FILE",
  "GIT_COMMON_DIR",
];

// The runner's git behaves the same on every host: no system or user config (no stray credential helpers,
// signing, hooks paths), never a prompt on a terminal, messages in English.
export const HERMETIC_GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  LC_ALL: "C",
};

const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/** Runs git without a shell and resolves with its stdout; rejects with a `GitError` carrying its stderr. */
export function git(args: readonly string[], options: GitOptions = {}): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REPOSITORY_ENV) delete env[name];
  Object.assign(env, HERMETIC_GIT_ENV, options.env);
  const { timeoutMs } = options;
  return new Promise((resolve, reject) => {
    // Its own process group, so that a deadline kills the helpers it started (remote-http, credential) too.
    const child = spawn("git", args, { cwd: options.cwd, env, detached: timeoutMs !== undefined });
    if (options.input !== undefined) child.stdin.end(options.input);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let failure: string | null = null;
    const stop = (why: string) => {
      failure ??= why;
      killGroup(child);
    };
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) stop(`output over ${MAX_OUTPUT_BYTES} bytes`);
      else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => stop(`timed out after ${timeoutMs} ms`), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      // git never ran; a missing cwd also shows up as "spawn git ENOENT".
      reject(new GitError(args, null, `${error.message} (cwd: ${options.cwd ?? process.cwd()})`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const errors = Buffer.concat(stderr).toString("utf8");
      if (failure !== null)
        return reject(new GitError(args, null, `${failure}${errors ? `: ${errors}` : ""}`));
      if (code === 0) return resolve(Buffer.concat(stdout).toString("utf8"));
      reject(new GitError(args, code, errors, Buffer.concat(stdout).toString("utf8")));
    });
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    // The whole group when git leads one (started with a deadline); else there is no such group: git alone.
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/** `https://user:secret@host` → `https://user:***@host`, wherever such a URL appears in the text. */
export function redact(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:)[^\s/@]+@/gi, "$1***@");
}

/** The command for messages: `-c key=value` pairs (credential helper scripts) are noise there. */
function describe(args: readonly string[]): string {
  const shown: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-c") i++;
    else shown.push(args[i] ?? "");
  }
  return redact(`git ${shown.join(" ")}`);
}

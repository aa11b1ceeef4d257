import { execFile } from "node:child_process";

export type GitOptions = {
  cwd?: string;
  /** Added to the inherited environment; a push's credential travels here and nowhere else. */
  env?: Record<string, string>;
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
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      { cwd: options.cwd, env, encoding: "utf8", maxBuffer: MAX_OUTPUT_BYTES },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const exitCode = typeof error.code === "number" ? error.code : null;
        // Without an exit code git never ran; a missing cwd also shows up as "spawn git ENOENT".
        const detail = exitCode === null ? `${error.message} (cwd: ${options.cwd ?? process.cwd()})` : stderr;
        reject(new GitError(args, exitCode, detail, stdout));
      },
    );
  });
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

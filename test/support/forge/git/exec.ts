import { spawn } from "node:child_process";

/** Environment for every git the forge runs: no user or system config, no prompts, stable messages. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    ...extra,
  };
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

class GitError extends Error {
  override name = "GitError";
}

/** Who a commit the forge writes is by (merge commits, seeded repositories). */
export interface Identity {
  name: string;
  email: string;
}

export function identityEnv(identity: Identity): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
  };
}

/**
 * Runs git and collects its output. Exit codes in `ok` (default: 0) resolve; anything else rejects with the
 * command and git's stderr.
 */
export function git(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; ok?: number[] } = {},
): Promise<GitResult> {
  const ok = options.ok ?? [0];
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      cwd: options.cwd,
      env: gitEnv(options.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const result = {
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        code: code ?? -1,
      };
      if (ok.includes(result.code)) resolve(result);
      else reject(new GitError(`git ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`));
    });
  });
}

import { GitError } from "../git/exec.ts";
import type { WorktreeGit } from "../git/workspace.ts";
import { outputOf } from "./output.ts";
import type { Sandbox } from "./session-sandbox.ts";

/**
 * How long one of the runner's git commands in a worktree may take: far beyond any healthy `status`, `add`,
 * `commit` or bundle, short of holding the job's slot forever on what the agent planted (a filter that never
 * ends).
 */
export const SANDBOX_GIT_TIMEOUT_MS = 10 * 60_000;

/**
 * The runner's git commands in a worktree, run in the sandbox the session had: whatever the agent planted in
 * its repository (a filter, an fsmonitor, an include) runs there too, with no credential and no network.
 * Past the deadline the command's process group (the sandbox and all in it) is killed and the call fails.
 */
export function sandboxGit(sandbox: Sandbox, options: { timeoutMs?: number } = {}): WorktreeGit {
  const timeoutMs = options.timeoutMs ?? SANDBOX_GIT_TIMEOUT_MS;
  return async (place, args, env) => {
    const child = sandbox.spawn(place, "git", args, {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      detached: true,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    const { code, stdout, stderr } = await outputOf(child)
      .catch((error: Error) => {
        throw new GitError(args, null, error.message);
      })
      .finally(() => clearTimeout(timer));
    if (timedOut) throw new GitError(args, null, `timed out after ${timeoutMs} ms`);
    if (code !== 0) throw new GitError(args, code, stderr);
    return stdout;
  };
}

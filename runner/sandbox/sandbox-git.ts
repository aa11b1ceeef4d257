import { GitError } from "../git/exec.ts";
import type { WorktreeGit } from "../git/workspace.ts";
import { outputOf } from "./output.ts";
import type { Sandbox } from "./session-sandbox.ts";

/**
 * The runner's git commands in a worktree, run in the sandbox the session had: whatever the agent planted in
 * its repository (a filter, an fsmonitor, an include) runs there too, with no credential and no network.
 */
export function sandboxGit(sandbox: Sandbox): WorktreeGit {
  return async (place, args, env) => {
    const child = sandbox.spawn(place, "git", args, {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    });
    const { code, stdout, stderr } = await outputOf(child).catch((error: Error) => {
      throw new GitError(args, null, error.message);
    });
    if (code !== 0) throw new GitError(args, code, stderr);
    return stdout;
  };
}

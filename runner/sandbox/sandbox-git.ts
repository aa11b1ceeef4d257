import { GitError } from "../git/exec.ts";
import type { WorktreeGit } from "../git/workspace.ts";
import type { Sandbox } from "./session-sandbox.ts";

/**
 * The runner's git commands in a worktree, run in the sandbox the session had: whatever the agent planted in
 * its repository (a filter, an fsmonitor, an include) runs there too, with no credential and no network.
 */
export function sandboxGit(sandbox: Sandbox): WorktreeGit {
  return (place, args, env) =>
    new Promise((resolve, reject) => {
      const child = sandbox.spawn({ ...place, writable: [] }, "git", args, {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      });
      child.stdin?.end();
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      child.on("error", (error) => reject(new GitError(args, null, error.message)));
      child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new GitError(args, code, stderr))));
    });
}

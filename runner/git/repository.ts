/**
 * The runner's own git calls on a repository of its work dir (no remote, no credential): reading refs and
 * ancestry, making a worktree's repository, and the names the workspace gives directories and branches.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { GitError, git } from "./exec.ts";

// Repository hooks are the agent's to write; none of them runs in the runner's own git calls.
export const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];
export const NAME_PART = /^[A-Za-z0-9._-]+$/;

/** Runs `task` after the repository's earlier git operations: the `Workspace`'s queue, lent to its helpers. */
export type Serial = <T>(task: () => Promise<T>) => Promise<T>;

export function branchName(issueNumber: number): string {
  if (!Number.isSafeInteger(issueNumber) || issueNumber < 1) {
    throw new RangeError(`bad issue number: ${issueNumber}`);
  }
  return `conveyor/${issueNumber}`;
}

/** `owner/repo` → `owner__repo`; owners with `__` are refused so that no two keys share a directory. */
export function slug(repoKey: string): string {
  const [owner, repo, ...more] = repoKey.split("/");
  const valid = (part: string | undefined): part is string =>
    part !== undefined && NAME_PART.test(part) && part !== "." && part !== "..";
  if (!valid(owner) || !valid(repo) || more.length > 0 || owner.includes("__")) {
    throw new Error(`bad repository key: ${JSON.stringify(repoKey)}`);
  }
  return `${owner}__${repo}`;
}

export function run(
  cwd: string,
  args: string[],
  env?: Record<string, string>,
  timeoutMs?: number,
): Promise<string> {
  return git([...NO_HOOKS, ...args], { cwd, env, ...(timeoutMs !== undefined && { timeoutMs }) });
}

export async function hasCommit(gitDir: string, sha: string): Promise<boolean> {
  return run(gitDir, ["cat-file", "-e", `${sha}^{commit}`]).then(
    () => true,
    () => false,
  );
}

export async function resolveRef(gitDir: string, ref: string): Promise<string | undefined> {
  const out = await run(gitDir, ["for-each-ref", "--format=%(objectname)", ref]);
  return out.trim() || undefined;
}

export async function isAncestor(gitDir: string, ancestor: string, descendant: string): Promise<boolean> {
  try {
    await run(gitDir, ["merge-base", "--is-ancestor", ancestor, descendant]);
    return true;
  } catch (error) {
    // Exit 1 is git's "no"; anything else is a real failure.
    if (error instanceof GitError && error.exitCode === 1) return false;
    throw error;
  }
}

/**
 * A new repository of the runner's making (its config is ours until the session starts), borrowing the
 * private repository's objects, with the base branch as `origin/<base>` for the agent's diffs. `branch`
 * null: detached at `start`.
 */
export async function createWorktree(
  mirror: string,
  path: string,
  refs: { branch: string | null; start: string; baseBranch: string; base: string },
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await run(dirname(path), ["init", "--quiet", "--template=", path]);
  await writeFile(join(path, ".git", "objects", "info", "alternates"), `${join(mirror, "objects")}\n`);
  await run(path, ["update-ref", `refs/remotes/origin/${refs.baseBranch}`, refs.base]);
  const target = refs.branch === null ? ["--detach", refs.start] : ["-B", refs.branch, refs.start];
  await run(path, ["checkout", "--quiet", ...target]);
}

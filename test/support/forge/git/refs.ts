import { git } from "./exec.ts";

export const ZERO_SHA = "0000000000000000000000000000000000000000";

/** Branch name → head commit. */
export async function branchHeads(gitDir: string): Promise<Record<string, string>> {
  const { stdout } = await git([
    "--git-dir",
    gitDir,
    "for-each-ref",
    "--format=%(objectname) %(refname)",
    "refs/heads/",
  ]);
  const heads: Record<string, string> = {};
  for (const line of stdout.split("\n")) {
    const match = /^([0-9a-f]{40}) refs\/heads\/(.+)$/.exec(line);
    if (match?.[1] && match[2]) heads[match[2]] = match[1];
  }
  return heads;
}

export interface BranchUpdate {
  branch: string;
  /** null: the branch was created. */
  before: string | null;
  /** null: the branch was deleted. */
  after: string | null;
}

export function branchUpdates(before: Record<string, string>, after: Record<string, string>): BranchUpdate[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names
    .filter((branch) => before[branch] !== after[branch])
    .map((branch) => ({ branch, before: before[branch] ?? null, after: after[branch] ?? null }));
}

/** The commit a branch, tag or (possibly short) sha names, or null. */
export async function resolveCommit(gitDir: string, ref: string): Promise<string | null> {
  if (ref.startsWith("-")) return null;
  const args = ["--git-dir", gitDir, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`];
  const { stdout, code } = await git(args, { ok: [0, 1, 128] });
  return code === 0 ? stdout.trim() : null;
}

/** Moves `ref` to `sha`, only if it is still at `expected` when given (compare and swap). */
export async function updateRef(gitDir: string, ref: string, sha: string, expected?: string): Promise<void> {
  await git(["--git-dir", gitDir, "update-ref", ref, sha, ...(expected ? [expected] : [])]);
}

/** Deletes `ref`, only if it is still at `expected` (compare and delete). */
export async function deleteRef(gitDir: string, ref: string, expected: string): Promise<void> {
  await git(["--git-dir", gitDir, "update-ref", "-d", ref, expected]);
}

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, type Identity, identityEnv } from "./exec.ts";

export async function mergeBase(gitDir: string, a: string, b: string): Promise<string | null> {
  const { stdout, code } = await git(["--git-dir", gitDir, "merge-base", a, b], { ok: [0, 1] });
  return code === 0 ? stdout.trim() : null;
}

/** The merged tree of two commits, or null when they conflict (`git merge-tree --write-tree`, git ≥ 2.38). */
export async function mergeTree(gitDir: string, base: string, head: string): Promise<string | null> {
  const args = ["--git-dir", gitDir, "merge-tree", "--write-tree", "--no-messages", base, head];
  const { stdout, code } = await git(args, { ok: [0, 1] });
  return code === 0 ? (stdout.split("\n")[0] ?? "").trim() : null;
}

export async function commitTree(
  gitDir: string,
  tree: string,
  parents: string[],
  message: string,
  identity: Identity,
): Promise<string> {
  const args = [
    "--git-dir",
    gitDir,
    "commit-tree",
    tree,
    ...parents.flatMap((parent) => ["-p", parent]),
    "-m",
    message,
  ];
  return (await git(args, { env: identityEnv(identity) })).stdout.trim();
}

/**
 * `head`'s commits replayed onto `base` (Gitea's "rebase" style) in a temporary worktree of the bare
 * repository; null when a commit does not apply.
 */
export async function rebaseOnto(
  gitDir: string,
  base: string,
  head: string,
  identity: Identity,
): Promise<string | null> {
  const scratch = await mkdtemp(join(tmpdir(), "local-forge-rebase-"));
  const worktree = join(scratch, "tree");
  try {
    await git(["--git-dir", gitDir, "worktree", "add", "--quiet", "--detach", worktree, head]);
    const { code } = await git(["rebase", "--quiet", base], {
      cwd: worktree,
      env: identityEnv(identity),
      ok: [0, 1],
    });
    if (code !== 0) return null;
    return (await git(["rev-parse", "HEAD"], { cwd: worktree })).stdout.trim();
  } finally {
    await git(["--git-dir", gitDir, "worktree", "remove", "--force", worktree], { ok: [0, 128] });
    await rm(scratch, { recursive: true, force: true });
  }
}

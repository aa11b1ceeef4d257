import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { git, type Identity, identityEnv } from "./exec.ts";

/** A bare repository whose HEAD names `defaultBranch`. */
export async function initBare(gitDir: string, defaultBranch: string): Promise<void> {
  await git(["init", "--quiet", "--bare", `--initial-branch=${defaultBranch}`, gitDir]);
}

/** Files as path → content. */
export type SeedFiles = Record<string, string>;

/**
 * Commits the content of `source` (a directory, or files written to a temporary one) as the first commit of
 * `branch`, through a temporary index: no clone, no working tree in the repository.
 */
export async function seedBranch(
  gitDir: string,
  branch: string,
  source: { dir: string } | { files: SeedFiles },
  identity: Identity,
): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), "local-forge-seed-"));
  try {
    let workTree: string;
    if ("dir" in source) {
      workTree = source.dir;
    } else {
      workTree = join(scratch, "files");
      for (const [path, content] of Object.entries(source.files)) {
        const file = join(workTree, path);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content);
      }
    }
    const env = { GIT_INDEX_FILE: join(scratch, "index"), ...identityEnv(identity) };
    const base = ["--git-dir", gitDir, "--work-tree", workTree];
    await git([...base, "add", "--all", "."], { env, cwd: workTree });
    const tree = (await git([...base, "write-tree"], { env })).stdout.trim();
    const commit = (await git([...base, "commit-tree", tree, "-m", "Initial commit"], { env })).stdout.trim();
    await git(["--git-dir", gitDir, "update-ref", `refs/heads/${branch}`, commit, ""]);
    return commit;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

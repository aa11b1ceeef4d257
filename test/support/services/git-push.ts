/** Commits files onto a branch of a forge repository and pushes it, as a runner would: real git. */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export async function pushFiles(options: {
  cloneUrl: string;
  branch: string;
  base: string;
  files: Record<string, string>;
  /** Paths committed as symbolic links (path → target, replacing what is there), as a hostile pull request may hold them. */
  symlinks?: Record<string, string>;
  /** Paths committed as executable (mode 100755), whether or not `files` changes their content. */
  executable?: string[];
  message: string;
  /** Merge `base` into the branch first, as a session resolving a conflict does: `files` resolve it. */
  mergeBase?: boolean;
}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "conveyor-push-"));
  const git = (...args: string[]) =>
    run("git", args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_NAME: "Agent",
        GIT_AUTHOR_EMAIL: "agent@localhost",
        GIT_COMMITTER_NAME: "Agent",
        GIT_COMMITTER_EMAIL: "agent@localhost",
      },
    });
  try {
    await git("clone", "--quiet", options.cloneUrl, ".");
    const remoteBranch = await git("ls-remote", "--heads", "origin", options.branch);
    await git(
      "checkout",
      "--quiet",
      "-B",
      options.branch,
      remoteBranch.stdout.trim() ? `origin/${options.branch}` : `origin/${options.base}`,
    );
    if (options.mergeBase) {
      // A conflicting merge exits 1 and leaves the markers for `files` to resolve; the commit is the merge.
      await git("merge", "--quiet", "--no-ff", "--no-commit", `origin/${options.base}`).catch(
        () => undefined,
      );
    }
    for (const [path, content] of Object.entries(options.files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    for (const [path, target] of Object.entries(options.symlinks ?? {})) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await rm(join(dir, path), { recursive: true, force: true });
      await symlink(target, join(dir, path));
    }
    await git("add", "--all");
    for (const path of options.executable ?? []) await git("update-index", "--chmod=+x", "--", path);
    // No files: the branch is pushed where it starts, without a commit of its own.
    const changed = [options.files, options.symlinks ?? {}, options.executable ?? []].some(
      (what) => Object.keys(what).length > 0,
    );
    if (changed) await git("commit", "--quiet", "-m", options.message);
    await git("push", "--quiet", "origin", `HEAD:refs/heads/${options.branch}`);
    return (await git("rev-parse", "HEAD")).stdout.trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An issue's worktree and its branch, conveyor/<issue>, in the private repository: the worktree kept or
 * rebuilt from the checkpoint, the agent's work collected from it, the branch compared with the base, and
 * both removed when the issue is done.
 */
import { existsSync, lstatSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { cleanCommitMessages } from "./commit-messages.ts";
import { GitError, HERMETIC_GIT_ENV } from "./exec.ts";
import {
  branchName,
  createWorktree,
  hasCommit,
  isAncestor,
  NO_HOOKS,
  resolveRef,
  run,
  type Serial,
  slug,
} from "./repository.ts";

export type Author = { name: string; email: string };

export const DEFAULT_AUTHOR: Author = { name: "Conveyor", email: "conveyor@localhost" };

/**
 * Runs git in a worktree's repository (whose config is the agent's) and resolves with its stdout: inside the
 * session's sandbox, seeing `readOnly` and writing `writable` besides the worktree. The default runs it
 * directly.
 */
export type WorktreeGit = (
  place: { worktree: string; readOnly: readonly string[]; writable: readonly string[] },
  args: readonly string[],
  env: Record<string, string>,
) => Promise<string>;

export type Worktree = {
  path: string;
  branch: string;
  /**
   * Where its content came from: `existing` (kept as it was, uncommitted changes included), `local_branch`
   * (worktree recreated from the local branch), `remote_branch` (from the pushed branch: the checkpoint),
   * `base` (a new branch).
   */
  from: "existing" | "local_branch" | "remote_branch" | "base";
};

/** One issue's places and the means to run git there: what the `Workspace` lends the functions below. */
export type IssueContext = {
  repoKey: string;
  issueNumber: number;
  /** The private repository. */
  mirror: string;
  /** The private repository's objects, which the worktree borrows. */
  objects: string;
  worktree: string;
  /**
   * Reserved by this process (`reserveIssueWorktree`) for the job now running: a session may already be
   * running in the directory, so it is filled in place, never removed.
   */
  reserved: boolean;
  worktreeGit: WorktreeGit;
  serial: Serial;
};

// In the agent's repository, also no fsmonitor command and no signing program (filters run in the sandbox).
const IN_WORKTREE = [
  ...NO_HOOKS,
  "-c",
  "core.fsmonitor=false",
  "-c",
  "commit.gpgSign=false",
  "-c",
  "core.untrackedCache=false",
];

export async function ensureIssueWorktree(issue: IssueContext, baseBranch: string): Promise<Worktree> {
  const { repoKey, mirror, worktree: path } = issue;
  const branch = branchName(issue.issueNumber);
  const marker = reservationMarker(path);
  return issue.serial(async () => {
    if (!existsSync(mirror)) throw new Error(`ensureWorktree(${repoKey}): ensureMirror has not run`);
    const [local, remote, base] = await Promise.all([
      resolveRef(mirror, `refs/heads/${branch}`),
      resolveRef(mirror, `refs/remotes/origin/${branch}`),
      resolveRef(mirror, `refs/remotes/origin/${baseBranch}`),
    ]);
    if (base === undefined)
      throw new Error(`ensureWorktree(${repoKey}): no branch ${baseBranch} on the remote`);
    const localIsCurrent =
      local !== undefined &&
      (remote === undefined || local === remote || (await isAncestor(mirror, remote, local)));

    // Kept only with its branch recorded here, which happens once the worktree is complete: a runner killed
    // while creating it leaves a repository on no commit, rebuilt like a missing one. So is a directory
    // reserved and never filled (its marker is left): the branch recorded may be an earlier worktree's.
    const reservedBefore = !issue.reserved && existsSync(marker);
    if (!issue.reserved && !reservedBefore && isStandaloneRepository(path) && localIsCurrent) {
      await removeStaleLocks(join(path, ".git"));
      // The base as just fetched, for a session that merges it (an update job); in the agent's repository,
      // so through WorktreeGit. Its objects are the private repository's, which the worktree borrows.
      await issue.worktreeGit(
        { worktree: path, readOnly: [issue.objects], writable: [] },
        [...IN_WORKTREE, "update-ref", `refs/remotes/origin/${baseBranch}`, base],
        HERMETIC_GIT_ENV,
      );
      return { path, branch, from: "existing" };
    }
    // A reserved directory is the sandbox's bind: removing it would leave the session in a deleted one.
    if (!issue.reserved) await rm(path, { recursive: true, force: true });
    const [start, from] = localIsCurrent
      ? [local, "local_branch" as const]
      : remote !== undefined
        ? [remote, "remote_branch" as const]
        : [base, "base" as const];
    await createWorktree(mirror, path, { branch, start, baseBranch, base });
    await run(mirror, ["update-ref", `refs/heads/${branch}`, start]);
    await rm(marker, { force: true });
    return { path, branch, from };
  });
}

/**
 * Makes the issue's worktree directory an empty repository of the runner's ahead of its content, so that a
 * session can start in it (the sandbox binds the directory; Claude Code looks, as it starts, whether its cwd
 * is a repository) while the fetch and the checkout run; `ensureIssueWorktree` then fills it in place. Only
 * where no worktree of an earlier job is: whether one is kept or rebuilt is the fetch's to decide. Returns
 * whether it reserved the directory. A marker beside it (outside every sandbox) says it is not filled yet,
 * so that a runner killed meanwhile does not keep it.
 */
export async function reserveIssueWorktree(issue: IssueContext): Promise<boolean> {
  const { worktree: path } = issue;
  const marker = reservationMarker(path);
  return issue.serial(async () => {
    if (isStandaloneRepository(path) && !existsSync(marker)) return false;
    await rm(path, { recursive: true, force: true });
    await mkdir(dirname(path), { recursive: true });
    await writeFile(marker, "");
    await run(dirname(path), ["init", "--quiet", "--template=", path]);
    return true;
  });
}

function reservationMarker(worktree: string): string {
  return `${worktree}.reserved`;
}

/**
 * Nothing of the worktree's repository is read on the host: its refs, alternates and packs are the agent's
 * and may be symlinks that resolve only outside the sandbox (into another project's private repository).
 * The branch leaves as a bundle made in the sandbox (in a directory under `bundles`), holding only what the
 * sandbox could see.
 */
export async function collectIssueBranch(
  issue: IssueContext,
  message: string,
  { author, bundles }: { author: Author; bundles: string },
): Promise<{ sha: string; committedLeftovers: boolean }> {
  const place = { worktree: issue.worktree, readOnly: [issue.objects] };
  const inWorktree = (args: string[], env: Record<string, string> = {}, writable: string[] = []) =>
    issue.worktreeGit({ ...place, writable }, [...IN_WORKTREE, ...args], { ...HERMETIC_GIT_ENV, ...env });
  let committedLeftovers = false;
  if ((await inWorktree(["status", "--porcelain", "--untracked-files=all"])) !== "") {
    await inWorktree(["add", "--all"]);
    const { name, email } = author;
    const env = {
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
    };
    await inWorktree(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message], env);
    committedLeftovers = true;
  }
  const { mirror } = issue;
  const branch = `refs/heads/${branchName(issue.issueNumber)}`;
  const head = (await inWorktree(["rev-parse", "--verify", "--end-of-options", `${branch}^{commit}`])).trim();
  if (!/^[0-9a-f]{40,64}$/.test(head))
    throw new Error(`collect: ${branch} is not a commit: ${head.slice(0, 80)}`);
  return issue.serial(async () => {
    if (!(await hasCommit(mirror, head))) {
      await mkdir(bundles, { recursive: true });
      const dir = await mkdtemp(join(bundles, `${slug(issue.repoKey)}-${issue.issueNumber}-`));
      try {
        const bundle = join(dir, "branch.bundle");
        // What the private repository has already is left out; the bundle names it as prerequisites.
        const known = await run(mirror, [
          "for-each-ref",
          "--format=%(objectname)",
          "refs/remotes/origin",
          branch,
        ]);
        const exclude = [...new Set(known.split("\n").filter(Boolean))].map((sha) => `^${sha}`);
        await inWorktree(["bundle", "create", "--quiet", bundle, branch, ...exclude], {}, [dir]);
        await run(mirror, [
          "fetch",
          "--quiet",
          "--no-tags",
          "--no-write-fetch-head",
          bundle,
          `+${branch}:${branch}`,
        ]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    // "Fixes #2" in a session's commit would close issue 2 when the pull request merges: cleaned here.
    const sha = await cleanCommitMessages(mirror, head);
    await run(mirror, ["update-ref", branch, sha]);
    return { sha, committedLeftovers };
  });
}

export async function reapIssue({ mirror, worktree, issueNumber, serial }: IssueContext): Promise<void> {
  const branch = branchName(issueNumber);
  return serial(async () => {
    await rm(worktree, { recursive: true, force: true });
    await rm(reservationMarker(worktree), { force: true });
    if (!existsSync(mirror)) return;
    if ((await resolveRef(mirror, `refs/heads/${branch}`)) !== undefined) {
      await run(mirror, ["branch", "--quiet", "-D", branch]);
    }
  });
}

export async function conflictWithBase(
  { mirror, issueNumber }: IssueContext,
  baseBranch: string,
  maxLanded: number,
): Promise<{ files: string[]; landed: string[] }> {
  const branch = `refs/heads/${branchName(issueNumber)}`;
  const base = `refs/remotes/origin/${baseBranch}`;
  let files: string[] = [];
  try {
    await run(mirror, ["merge-tree", "--write-tree", "--name-only", "--no-messages", branch, base]);
  } catch (error) {
    // Exit 1: conflicts. The output is the tree, then the conflicted paths, one a line.
    if (!(error instanceof GitError) || error.exitCode !== 1) throw error;
    files = [...new Set(error.stdout.split("\n").slice(1).filter(Boolean))];
  }
  const log = await run(mirror, ["log", `--max-count=${maxLanded}`, "--format=%s", `${branch}..${base}`]);
  return { files, landed: log.split("\n").filter(Boolean) };
}

export function diffAgainstBase({ mirror, issueNumber }: IssueContext, baseBranch: string): Promise<string> {
  return run(mirror, [
    "diff",
    "--no-ext-diff",
    "--no-textconv",
    `refs/remotes/origin/${baseBranch}...refs/heads/${branchName(issueNumber)}`,
  ]);
}

/**
 * Git's lock files in a kept worktree's repository (index.lock, HEAD.lock, a ref's lock). One job of an issue
 * runs at a time, and every process of an earlier one is gone (it died with its runner, or this runner killed
 * it at start), so a lock there is a killed git's, and it would fail the session's next commit ("index.lock:
 * File exists"). The repository is the agent's: symbolic links are neither followed nor removed.
 */
async function removeStaleLocks(gitDir: string, top = true): Promise<void> {
  for (const entry of await readdir(gitDir, { withFileTypes: true })) {
    const path = join(gitDir, entry.name);
    if (entry.isDirectory()) {
      if (!(top && entry.name === "objects")) await removeStaleLocks(path, false);
    } else if (entry.isFile() && entry.name.endsWith(".lock")) {
      await rm(path, { force: true });
    }
  }
}

/**
 * A worktree made by `createWorktree`: a real `.git` directory (not the `.git` file of a linked worktree)
 * holding a `HEAD` file. Nothing is followed: a session may have replaced `.git` with a symbolic link to the
 * private repository or another issue's, which the runner, outside any sandbox, would then clean up or keep.
 */
function isStandaloneRepository(path: string): boolean {
  const gitDir = join(path, ".git");
  return isReal(gitDir, "directory") && isReal(join(gitDir, "HEAD"), "file");
}

function isReal(path: string, kind: "directory" | "file"): boolean {
  try {
    const stat = lstatSync(path);
    return kind === "directory" ? stat.isDirectory() : stat.isFile();
  } catch {
    return false;
  }
}

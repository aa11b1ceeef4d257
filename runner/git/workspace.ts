import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { GitError, git } from "./exec.ts";

/**
 * The runner's git workspace in one work dir:
 *
 *   <workDir>/mirrors/<owner>__<repo>.git          bare, created once, afterwards only fetched
 *   <workDir>/worktrees/<owner>__<repo>/<issue>    one worktree per issue on branch conveyor/<issue>
 *
 * The mirror keeps the remote's branches under refs/remotes/origin/*, so fetching (with --prune) never touches
 * the local conveyor/* branches that the worktrees have checked out. The remote URL lives only in memory and
 * in the arguments of fetch and push, never in a config file.
 *
 * Credentials: the token reaches git only through the environment of the fetch or push process, read there by
 * a credential helper given on the command line. That command line first clears every configured helper (the
 * mirror's config is shared with the worktrees, so the agent can write to it) and scopes ours to the remote's
 * origin; hooks are off for every git call the runner makes. What this cannot stop is an agent that rewrites
 * the mirror's config to send the push through a command transport (url.*.insteadOf to ext::, ssh commands):
 * sessions must not be able to write the mirror's config to be safe from that.
 *
 * One runner process per work dir: operations on a repository are serialized within the process only.
 */
export type GitCredential = { username: string; token: string };
export type Author = { name: string; email: string };

export type WorkspaceOptions = {
  workDir: string;
  /** For fetch and push over http(s); omit for remotes that need none. */
  credential?: GitCredential;
  author?: Author;
};

export type RepoRef = { repoKey: string };
export type IssueRef = { repoKey: string; issueNumber: number };

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

/**
 * The remote moved on without us. The runner is the only writer of conveyor/<issue>, so this means another
 * runner (or a human) wrote it: the work here is stale and must not overwrite theirs.
 */
export class PushRejectedError extends GitError {
  constructor(cause: GitError) {
    super(cause.args, cause.exitCode, cause.stderr);
    this.name = "PushRejectedError";
  }
}

export const DEFAULT_AUTHOR: Author = { name: "Conveyor", email: "conveyor@localhost" };

// `$1` is the helper's action; only `get` answers, `store` and `erase` are ignored.
const CREDENTIAL_HELPER =
  '!f() { if [ "$1" = get ]; then printf "username=%s\\npassword=%s\\n" ' +
  '"$CONVEYOR_GIT_USERNAME" "$CONVEYOR_GIT_TOKEN"; fi; }; f';
// Repository hooks are the agent's to write; none of them runs in the runner's own git calls.
const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];
const REMOTE_HEADS = "+refs/heads/*:refs/remotes/origin/*";
const NAME_PART = /^[A-Za-z0-9._-]+$/;

export class Workspace {
  readonly workDir: string;
  readonly #credential: GitCredential | undefined;
  readonly #author: Author;
  readonly #remoteUrls = new Map<string, string>();
  readonly #queues = new Map<string, Promise<void>>();

  constructor(options: WorkspaceOptions) {
    mkdirSync(options.workDir, { recursive: true });
    // git records worktree paths resolved; comparing against them needs the same form.
    this.workDir = realpathSync(options.workDir);
    this.#credential = options.credential;
    this.#author = options.author ?? DEFAULT_AUTHOR;
  }

  mirrorPath(repoKey: string): string {
    return join(this.workDir, "mirrors", `${slug(repoKey)}.git`);
  }

  worktreePath({ repoKey, issueNumber }: IssueRef): string {
    return join(this.workDir, "worktrees", slug(repoKey), String(issueNumber));
  }

  /** Creates the mirror on first use, fetches otherwise; returns its path. */
  async ensureMirror({ repoKey, remoteUrl }: RepoRef & { remoteUrl: string }): Promise<string> {
    this.#checkRemoteUrl(remoteUrl);
    const mirror = this.mirrorPath(repoKey);
    return this.#serial(repoKey, async () => {
      if (existsSync(mirror)) await this.#fetch(mirror, remoteUrl);
      else await this.#createMirror(mirror, remoteUrl);
      this.#remoteUrls.set(repoKey, remoteUrl);
      return mirror;
    });
  }

  /**
   * The issue's worktree, after `ensureMirror`. The pushed branch is the checkpoint: local state (an existing
   * worktree with its uncommitted changes, or a leftover local branch) is kept only if it contains what was
   * pushed; otherwise the worktree is rebuilt or reset from the pushed branch, and only if nothing was ever
   * pushed does a new branch start from the base.
   */
  async ensureWorktree({
    repoKey,
    issueNumber,
    baseBranch,
  }: IssueRef & { baseBranch: string }): Promise<Worktree> {
    const mirror = this.mirrorPath(repoKey);
    const path = this.worktreePath({ repoKey, issueNumber });
    const branch = branchName(issueNumber);
    return this.#serial(repoKey, async () => {
      if (!existsSync(mirror)) throw new Error(`ensureWorktree(${repoKey}): ensureMirror has not run`);
      const [local, remote] = await Promise.all([
        resolveRef(mirror, `refs/heads/${branch}`),
        resolveRef(mirror, `refs/remotes/origin/${branch}`),
      ]);
      const localIsCurrent =
        local !== undefined &&
        (remote === undefined || local === remote || (await isAncestor(mirror, remote, local)));
      const registered = await isRegisteredWorktree(mirror, path);

      if (registered && existsSync(join(path, ".git"))) {
        if (localIsCurrent || remote === undefined) return { path, branch, from: "existing" };
        await run(path, ["checkout", "--quiet", "--force", "--no-track", "-B", branch, remote]);
        await run(path, ["clean", "--quiet", "--force", "-d"]);
        return { path, branch, from: "remote_branch" };
      }

      await discardWorktree(mirror, path, registered);
      if (localIsCurrent) {
        await run(mirror, ["worktree", "add", "--quiet", path, branch]);
        return { path, branch, from: "local_branch" };
      }
      const start = remote ?? `refs/remotes/origin/${baseBranch}`;
      await run(mirror, ["worktree", "add", "--quiet", "--no-track", "-B", branch, path, start]);
      return { path, branch, from: remote === undefined ? "base" : "remote_branch" };
    });
  }

  async headSha(worktree: string): Promise<string> {
    return (await run(worktree, ["rev-parse", "--verify", "HEAD"])).trim();
  }

  /** Commits whatever the agent left uncommitted; returns the new commit, or null if there was nothing. */
  async commitAll(worktree: string, message: string): Promise<string | null> {
    if ((await run(worktree, ["status", "--porcelain", "--untracked-files=all"])) === "") return null;
    await run(worktree, ["add", "--all"]);
    const { name, email } = this.#author;
    const env = {
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
    };
    await run(worktree, ["commit", "--quiet", "-m", message], env);
    return this.headSha(worktree);
  }

  /**
   * Pushes conveyor/<issue> and returns the pushed sha. A plain push, not a forced one (with or without lease):
   * the runner is the only writer of the branch, so a non-fast-forward means someone else wrote it and fails
   * with `PushRejectedError` instead of overwriting their work.
   */
  async push({ repoKey, issueNumber }: IssueRef): Promise<string> {
    const remoteUrl = this.#remoteUrls.get(repoKey);
    if (remoteUrl === undefined) {
      throw new Error(`push(${repoKey}): ensureMirror has not run in this process`);
    }
    const mirror = this.mirrorPath(repoKey);
    const branch = branchName(issueNumber);
    const sha = (await run(mirror, ["rev-parse", "--verify", `refs/heads/${branch}^{commit}`])).trim();
    try {
      await this.#remote(mirror, remoteUrl, ["push", "--quiet", remoteUrl, `${sha}:refs/heads/${branch}`]);
    } catch (error) {
      if (error instanceof GitError && error.stderr.includes("[rejected]")) {
        throw new PushRejectedError(error);
      }
      throw error;
    }
    return sha;
  }

  /** Removes the issue's worktree and local branch; safe to repeat. The pushed branch stays. */
  async reap({ repoKey, issueNumber }: IssueRef): Promise<void> {
    const mirror = this.mirrorPath(repoKey);
    const path = this.worktreePath({ repoKey, issueNumber });
    const branch = branchName(issueNumber);
    return this.#serial(repoKey, async () => {
      if (!existsSync(mirror)) return rm(path, { recursive: true, force: true });
      await discardWorktree(mirror, path, await isRegisteredWorktree(mirror, path));
      if ((await resolveRef(mirror, `refs/heads/${branch}`)) !== undefined) {
        await run(mirror, ["branch", "--quiet", "-D", branch]);
      }
    });
  }

  /** What the branch changed since it left the base (committed work only), for a recovery prompt. */
  async diffAgainstBase(worktree: string, baseBranch: string): Promise<string> {
    return run(worktree, [
      "diff",
      "--no-ext-diff",
      "--no-textconv",
      `refs/remotes/origin/${baseBranch}...HEAD`,
    ]);
  }

  async #createMirror(mirror: string, remoteUrl: string): Promise<void> {
    // Built aside and renamed into place: a mirror that exists has completed its first fetch.
    await mkdir(dirname(mirror), { recursive: true });
    const partial = await mkdtemp(`${mirror}.partial-`);
    try {
      await run(partial, ["init", "--quiet", "--bare"]);
      await this.#fetch(partial, remoteUrl);
      await rename(partial, mirror);
    } catch (error) {
      await rm(partial, { recursive: true, force: true });
      throw error;
    }
  }

  #fetch(gitDir: string, remoteUrl: string): Promise<string> {
    return this.#remote(gitDir, remoteUrl, [
      "fetch",
      "--quiet",
      "--prune",
      "--no-tags",
      remoteUrl,
      REMOTE_HEADS,
    ]);
  }

  /** A git command that talks to the remote: the only kind that ever sees the credential. */
  #remote(gitDir: string, remoteUrl: string, args: string[]): Promise<string> {
    // An empty helper clears the list, planted helpers included: they would be handed the token to "store".
    const config = ["-c", "credential.helper="];
    if (this.#credential === undefined) return run(gitDir, [...config, ...args]);
    const { protocol, host } = new URL(remoteUrl);
    config.push("-c", `credential.${protocol}//${host}.helper=${CREDENTIAL_HELPER}`);
    const { username, token } = this.#credential;
    return run(gitDir, [...config, ...args], { CONVEYOR_GIT_USERNAME: username, CONVEYOR_GIT_TOKEN: token });
  }

  #checkRemoteUrl(remoteUrl: string): void {
    if (!URL.canParse(remoteUrl)) {
      if (this.#credential !== undefined) throw new Error("a credential needs an http(s) remote URL");
      return;
    }
    const url = new URL(remoteUrl);
    if (url.password !== "") throw new Error("the remote URL must not carry a password; use the credential");
    if (this.#credential !== undefined && url.protocol !== "https:" && url.protocol !== "http:") {
      throw new Error("a credential needs an http(s) remote URL");
    }
  }

  /** One git operation at a time per repository: fetch, worktree add/remove and branch deletion share refs. */
  #serial<T>(repoKey: string, task: () => Promise<T>): Promise<T> {
    const result = (this.#queues.get(repoKey) ?? Promise.resolve()).then(task);
    this.#queues.set(
      repoKey,
      result.then(
        () => undefined,
        () => undefined,
      ),
    );
    return result;
  }
}

export function branchName(issueNumber: number): string {
  if (!Number.isSafeInteger(issueNumber) || issueNumber < 1) {
    throw new RangeError(`bad issue number: ${issueNumber}`);
  }
  return `conveyor/${issueNumber}`;
}

/** `owner/repo` → `owner__repo`; owners with `__` are refused so that no two keys share a directory. */
function slug(repoKey: string): string {
  const [owner, repo, ...more] = repoKey.split("/");
  const valid = (part: string | undefined): part is string =>
    part !== undefined && NAME_PART.test(part) && part !== "." && part !== "..";
  if (!valid(owner) || !valid(repo) || more.length > 0 || owner.includes("__")) {
    throw new Error(`bad repository key: ${JSON.stringify(repoKey)}`);
  }
  return `${owner}__${repo}`;
}

function run(cwd: string, args: string[], env?: Record<string, string>): Promise<string> {
  return git([...NO_HOOKS, ...args], { cwd, env });
}

async function resolveRef(gitDir: string, ref: string): Promise<string | undefined> {
  const out = await run(gitDir, ["for-each-ref", "--format=%(objectname)", ref]);
  return out.trim() || undefined;
}

async function isAncestor(gitDir: string, ancestor: string, descendant: string): Promise<boolean> {
  try {
    await run(gitDir, ["merge-base", "--is-ancestor", ancestor, descendant]);
    return true;
  } catch (error) {
    // Exit 1 is git's "no"; anything else is a real failure.
    if (error instanceof GitError && error.exitCode === 1) return false;
    throw error;
  }
}

async function isRegisteredWorktree(mirror: string, path: string): Promise<boolean> {
  const list = await run(mirror, ["worktree", "list", "--porcelain"]);
  return list.split("\n").includes(`worktree ${path}`);
}

/** Unregisters and deletes a worktree, whatever is left of it (locked, half-deleted, never registered). */
async function discardWorktree(mirror: string, path: string, registered: boolean): Promise<void> {
  if (registered) await run(mirror, ["worktree", "remove", "--force", "--force", path]);
  await rm(path, { recursive: true, force: true });
  await run(mirror, ["worktree", "prune"]);
}

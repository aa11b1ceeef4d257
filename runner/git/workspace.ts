import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { GitError, git, HERMETIC_GIT_ENV } from "./exec.ts";
import { pushArgs, pushRefusal } from "./push-rules.ts";

/**
 * The runner's git workspace in one work dir:
 *
 *   <workDir>/mirrors/<owner>__<repo>.git          the runner's private bare repository: fetch and push
 *   <workDir>/worktrees/<owner>__<repo>/<issue>    one standalone repository per issue on conveyor/<issue>
 *
 * The private repository keeps the remote's branches under refs/remotes/origin/* and the runner's record of
 * each issue's branch under refs/heads/conveyor/*. It is the only place git runs with the credential, and no
 * session ever sees it but its object store, read-only (the worktrees borrow those objects through
 * `objects/info/alternates`, so a new worktree writes no object). Its config is the runner's alone.
 *
 * A worktree's repository is the agent's: its config, hooks and attributes may be anything. The runner never
 * runs git there with a credential, and whatever it runs there (`status`, `add`, `commit`) goes through
 * `WorktreeGit`, which the runner points into the session's sandbox, with hooks, fsmonitor and signing off.
 * The agent's commits come out as objects: `git fetch <worktree>` into the private repository (git's
 * upload-pack reads no command from the repository it serves), then a push from there.
 *
 * The remote URL lives only in memory and in the arguments of fetch and push, never in a config file. The
 * token reaches git only through the environment of the fetch or push process, read there by a credential
 * helper given on the command line, scoped to the remote's origin.
 *
 * One runner process per work dir: operations on a repository are serialized within the process only.
 */
export type GitCredential = { username: string; token: string };
export type Author = { name: string; email: string };

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

export type WorkspaceOptions = {
  workDir: string;
  /** For fetch and push over http(s); omit for remotes that need none. */
  credential?: GitCredential;
  author?: Author;
  worktreeGit?: WorktreeGit;
  /** Deadline of each fetch and push (default `REMOTE_TIMEOUT_MS`): a stalled forge frees the slot. */
  remoteTimeoutMs?: number;
};

/** A fetch or push that takes longer has stalled: ten minutes is far beyond any healthy transfer here. */
export const REMOTE_TIMEOUT_MS = 10 * 60_000;

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

/** A push the runner may not make at all (see push-rules.ts): another ref than the held issue's, a bad lease. */
export class PushRefusedError extends Error {
  constructor(reason: string) {
    super(`push refused: ${reason}`);
    this.name = "PushRefusedError";
  }
}

/** What a job knows of its branch: the name it was given and the head the Worker last recorded. */
export type PushOptions = { branch?: string; lease?: string | null };

export const DEFAULT_AUTHOR: Author = { name: "Conveyor", email: "conveyor@localhost" };

// `$1` is the helper's action; only `get` answers, `store` and `erase` are ignored.
const CREDENTIAL_HELPER =
  '!f() { if [ "$1" = get ]; then printf "username=%s\\npassword=%s\\n" ' +
  '"$CONVEYOR_GIT_USERNAME" "$CONVEYOR_GIT_TOKEN"; fi; }; f';
// Repository hooks are the agent's to write; none of them runs in the runner's own git calls.
const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];
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
const REMOTE_HEADS = "+refs/heads/*:refs/remotes/origin/*";
const NAME_PART = /^[A-Za-z0-9._-]+$/;

export class Workspace {
  readonly workDir: string;
  readonly #credential: GitCredential | undefined;
  readonly #author: Author;
  readonly #remoteUrls = new Map<string, string>();
  readonly #queues = new Map<string, Promise<void>>();
  readonly #worktreeGit: WorktreeGit;
  readonly #remoteTimeoutMs: number;

  constructor(options: WorkspaceOptions) {
    this.#remoteTimeoutMs = options.remoteTimeoutMs ?? REMOTE_TIMEOUT_MS;
    mkdirSync(options.workDir, { recursive: true });
    // Paths bound into sandboxes and written into alternates files are compared resolved.
    this.workDir = realpathSync(options.workDir);
    this.#credential = options.credential;
    this.#author = options.author ?? DEFAULT_AUTHOR;
    this.#worktreeGit =
      options.worktreeGit ?? ((place, args, env) => git(args, { cwd: place.worktree, env }));
  }

  mirrorPath(repoKey: string): string {
    return join(this.workDir, "mirrors", `${slug(repoKey)}.git`);
  }

  /** The private repository's objects, which the worktrees borrow: a session's sandbox reads them. */
  objectsPath(repoKey: string): string {
    return join(this.mirrorPath(repoKey), "objects");
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
   * worktree with its uncommitted changes, or the branch last collected from one) is kept only if it contains
   * what was pushed; otherwise the worktree is rebuilt from the pushed branch, and only if nothing was ever
   * pushed does a new branch start from the base. The private repository's `conveyor/<issue>` then names
   * the commit the worktree started from.
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
      // while creating it leaves a repository on no commit, rebuilt like a missing one.
      if (isStandaloneRepository(path) && localIsCurrent) {
        await removeStaleLocks(join(path, ".git"));
        // The base as just fetched, for a session that merges it (an update job); in the agent's repository,
        // so through WorktreeGit. Its objects are the private repository's, which the worktree borrows.
        await this.#worktreeGit(
          { worktree: path, readOnly: [this.objectsPath(repoKey)], writable: [] },
          [...IN_WORKTREE, "update-ref", `refs/remotes/origin/${baseBranch}`, base],
          HERMETIC_GIT_ENV,
        );
        return { path, branch, from: "existing" };
      }
      await rm(path, { recursive: true, force: true });
      const [start, from] = localIsCurrent
        ? [local, "local_branch" as const]
        : remote !== undefined
          ? [remote, "remote_branch" as const]
          : [base, "base" as const];
      await this.#createWorktree(mirror, path, { branch, start, baseBranch, base });
      await run(mirror, ["update-ref", `refs/heads/${branch}`, start]);
      return { path, branch, from };
    });
  }

  /** Where one agent run's worktree lives: its own, gone when the run ends. */
  agentWorktreePath(repoKey: string, runId: string): string {
    if (!NAME_PART.test(runId) || runId.startsWith("."))
      throw new Error(`bad run id: ${JSON.stringify(runId)}`);
    return join(this.workDir, "agent-runs", slug(repoKey), runId);
  }

  /**
   * A fresh worktree of the base branch's head on no branch, after `ensureMirror`, for one agent run: nothing
   * in it is ever collected or pushed.
   */
  async agentWorktree({ repoKey, baseBranch, runId }: RepoRef & { baseBranch: string; runId: string }) {
    const mirror = this.mirrorPath(repoKey);
    const path = this.agentWorktreePath(repoKey, runId);
    return this.#serial(repoKey, async () => {
      const base = await resolveRef(mirror, `refs/remotes/origin/${baseBranch}`);
      if (base === undefined)
        throw new Error(`agentWorktree(${repoKey}): no branch ${baseBranch} on the remote`);
      await rm(path, { recursive: true, force: true });
      await this.#createWorktree(mirror, path, { branch: null, start: base, baseBranch, base });
      return path;
    });
  }

  /**
   * A review run's worktree: the pull request's head, fetched by `ref` (its branch, or the forge's pull ref
   * for a person's pull request) and checked out on no branch at `headSha` — only that commit: a head that
   * moved since the Worker asked is refused (the Worker re-checks it anyway). Nothing in it is pushed. After
   * `ensureMirror`, which keeps the remote's URL.
   */
  async reviewWorktree({
    repoKey,
    baseBranch,
    runId,
    ref,
    headSha,
  }: RepoRef & { baseBranch: string; runId: string; ref: string; headSha: string }) {
    const mirror = this.mirrorPath(repoKey);
    const path = this.agentWorktreePath(repoKey, runId);
    const remoteUrl = this.#remoteUrls.get(repoKey);
    if (remoteUrl === undefined) throw new Error(`reviewWorktree(${repoKey}) before ensureMirror`);
    return this.#serial(repoKey, async () => {
      const base = await resolveRef(mirror, `refs/remotes/origin/${baseBranch}`);
      if (base === undefined)
        throw new Error(`reviewWorktree(${repoKey}): no branch ${baseBranch} on the remote`);
      // Kept under a ref of the run's own while the worktree borrows its objects; removeAgentWorktree drops it.
      await this.#remote(mirror, remoteUrl, [
        "fetch",
        "--quiet",
        "--no-tags",
        remoteUrl,
        `+${ref}:${reviewRef(runId)}`,
      ]);
      const fetched = await resolveRef(mirror, reviewRef(runId));
      if (fetched !== headSha)
        throw new Error(`the pull request's head is ${fetched ?? "gone"}, not ${headSha}: nothing to review`);
      await rm(path, { recursive: true, force: true });
      await this.#createWorktree(mirror, path, { branch: null, start: headSha, baseBranch, base });
      return path;
    });
  }

  async removeAgentWorktree(repoKey: string, runId: string): Promise<void> {
    await rm(this.agentWorktreePath(repoKey, runId), { recursive: true, force: true });
    const mirror = this.mirrorPath(repoKey);
    if (existsSync(mirror) && (await resolveRef(mirror, reviewRef(runId))) !== undefined)
      await this.#serial(repoKey, () => run(mirror, ["update-ref", "-d", reviewRef(runId)]));
  }

  /**
   * A new repository of the runner's making (its config is ours until the session starts), borrowing the
   * private repository's objects, with the base branch as `origin/<base>` for the agent's diffs. `branch`
   * null: detached at `start`.
   */
  async #createWorktree(
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

  /**
   * Commits whatever the agent left uncommitted in the issue's worktree (through `WorktreeGit`: the agent's
   * repository), then takes the branch's commits into the private repository. Returns the branch's head
   * there, and whether a commit of leftovers was made.
   *
   * Nothing of the worktree's repository is read on the host: its refs, alternates and packs are the agent's
   * and may be symlinks that resolve only outside the sandbox (into another project's private repository).
   * The branch leaves as a bundle made in the sandbox, holding only what the sandbox could see.
   */
  async collect(ref: IssueRef, message: string): Promise<{ sha: string; committedLeftovers: boolean }> {
    const worktree = this.worktreePath(ref);
    const place = { worktree, readOnly: [this.objectsPath(ref.repoKey)] };
    const inWorktree = (args: string[], env: Record<string, string> = {}, writable: string[] = []) =>
      this.#worktreeGit({ ...place, writable }, [...IN_WORKTREE, ...args], { ...HERMETIC_GIT_ENV, ...env });
    let committedLeftovers = false;
    if ((await inWorktree(["status", "--porcelain", "--untracked-files=all"])) !== "") {
      await inWorktree(["add", "--all"]);
      const { name, email } = this.#author;
      const env = {
        GIT_AUTHOR_NAME: name,
        GIT_AUTHOR_EMAIL: email,
        GIT_COMMITTER_NAME: name,
        GIT_COMMITTER_EMAIL: email,
      };
      await inWorktree(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message], env);
      committedLeftovers = true;
    }
    const mirror = this.mirrorPath(ref.repoKey);
    const branch = `refs/heads/${branchName(ref.issueNumber)}`;
    const head = (
      await inWorktree(["rev-parse", "--verify", "--end-of-options", `${branch}^{commit}`])
    ).trim();
    if (!/^[0-9a-f]{40,64}$/.test(head))
      throw new Error(`collect: ${branch} is not a commit: ${head.slice(0, 80)}`);
    return this.#serial(ref.repoKey, async () => {
      if (!(await hasCommit(mirror, head))) {
        const bundles = join(this.workDir, "bundles");
        await mkdir(bundles, { recursive: true });
        const dir = await mkdtemp(join(bundles, `${slug(ref.repoKey)}-${ref.issueNumber}-`));
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
      await run(mirror, ["update-ref", branch, head]);
      return { sha: head, committedLeftovers };
    });
  }

  /**
   * Pushes the private repository's conveyor/<issue> (see `collect`) and returns the pushed sha. Only the held
   * issue's branch, whatever branch the job names (`PushRefusedError` otherwise). A fast-forward goes as a
   * plain push. Anything else (a session that rebased) is forced only under `lease`, the sha the Worker last
   * recorded for the branch (`--force-with-lease`); without a lease, or with one the remote has moved past,
   * it fails with `PushRejectedError` instead of overwriting someone else's work.
   */
  async push({ repoKey, issueNumber }: IssueRef, options: PushOptions = {}): Promise<string> {
    const branch = options.branch ?? branchName(issueNumber);
    const lease = options.lease ?? null;
    const refused = pushRefusal({ issueNumber, branch, lease });
    if (refused) throw new PushRefusedError(refused);
    const remoteUrl = this.#remoteUrls.get(repoKey);
    if (remoteUrl === undefined) {
      throw new Error(`push(${repoKey}): ensureMirror has not run in this process`);
    }
    const mirror = this.mirrorPath(repoKey);
    const sha = (await run(mirror, ["rev-parse", "--verify", `refs/heads/${branch}^{commit}`])).trim();
    const attempt = (withLease: string | null) =>
      this.#remote(mirror, remoteUrl, ["push", "--quiet", remoteUrl, ...pushArgs(sha, branch, withLease)]);
    try {
      await attempt(null).catch((error: unknown) => {
        if (lease !== null && isRejection(error)) return attempt(lease);
        throw error;
      });
    } catch (error) {
      if (isRejection(error)) throw new PushRejectedError(error);
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
      await rm(path, { recursive: true, force: true });
      if (!existsSync(mirror)) return;
      if ((await resolveRef(mirror, `refs/heads/${branch}`)) !== undefined) {
        await run(mirror, ["branch", "--quiet", "-D", branch]);
      }
    });
  }

  /**
   * Where the issue's branch (as the private repository has it) conflicts with the base as last fetched, and
   * what landed on the base since the branch left it (subjects, newest first, at most `maxLanded`): what an
   * update job's session is told. Empty `files` when the two merge cleanly.
   */
  async conflictWithBase(
    { repoKey, issueNumber }: IssueRef,
    baseBranch: string,
    maxLanded = 20,
  ): Promise<{ files: string[]; landed: string[] }> {
    const mirror = this.mirrorPath(repoKey);
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

  /**
   * What the branch changed since it left the base (committed work only), for a recovery prompt: from the
   * private repository, where `ensureWorktree` recorded the commit the worktree started from.
   */
  async diffAgainstBase({ repoKey, issueNumber }: IssueRef, baseBranch: string): Promise<string> {
    return run(this.mirrorPath(repoKey), [
      "diff",
      "--no-ext-diff",
      "--no-textconv",
      `refs/remotes/origin/${baseBranch}...refs/heads/${branchName(issueNumber)}`,
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

  /**
   * A git command that talks to the remote: the only kind that ever sees the credential, and only over https
   * (http for a loopback remote, as in tests; a local path only for a remote given as one).
   */
  #remote(gitDir: string, remoteUrl: string, args: string[]): Promise<string> {
    // An empty helper clears the list: the private repository has none, and none is ever taken from elsewhere.
    const config = ["-c", "credential.helper="];
    const env = { GIT_ALLOW_PROTOCOL: allowedProtocols(remoteUrl) };
    const timeoutMs = this.#remoteTimeoutMs;
    if (this.#credential === undefined) return run(gitDir, [...config, ...args], env, timeoutMs);
    const { protocol, host } = new URL(remoteUrl);
    config.push("-c", `credential.${protocol}//${host}.helper=${CREDENTIAL_HELPER}`);
    const { username, token } = this.#credential;
    return run(
      gitDir,
      [...config, ...args],
      { ...env, CONVEYOR_GIT_USERNAME: username, CONVEYOR_GIT_TOKEN: token },
      timeoutMs,
    );
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

function run(cwd: string, args: string[], env?: Record<string, string>, timeoutMs?: number): Promise<string> {
  return git([...NO_HOOKS, ...args], { cwd, env, ...(timeoutMs !== undefined && { timeoutMs }) });
}

/** The remote refused the update (not a fast-forward, or a stale lease), as opposed to failing. */
const isRejection = (error: unknown): error is GitError =>
  error instanceof GitError && error.stderr.includes("[rejected]");

/** Where a review run's pull request head is kept in the private repository while the run lasts. */
const reviewRef = (runId: string) => `refs/conveyor-reviews/${runId}`;

async function hasCommit(gitDir: string, sha: string): Promise<boolean> {
  return run(gitDir, ["cat-file", "-e", `${sha}^{commit}`]).then(
    () => true,
    () => false,
  );
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

/** A worktree made by `#createWorktree` (a `.git` directory, not the `.git` file of a linked worktree). */
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

function isStandaloneRepository(path: string): boolean {
  try {
    return statSync(join(path, ".git")).isDirectory() && existsSync(join(path, ".git", "HEAD"));
  } catch {
    return false;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** `GIT_ALLOW_PROTOCOL` for a remote: https; http only on loopback; file only for a remote that is a path. */
function allowedProtocols(remoteUrl: string): string {
  if (!URL.canParse(remoteUrl)) return "file";
  const url = new URL(remoteUrl);
  if (url.protocol === "file:") return "file";
  return url.protocol === "http:" && LOOPBACK.has(url.hostname) ? "https:http" : "https";
}

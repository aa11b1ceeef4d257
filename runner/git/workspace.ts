import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import {
  type AgentRunContext,
  createAgentWorktree,
  createReviewWorktree,
  removeAgentWorktree,
} from "./agent-worktree.ts";
import { git } from "./exec.ts";
import {
  type Author,
  collectIssueBranch,
  conflictWithBase,
  DEFAULT_AUTHOR,
  diffAgainstBase,
  ensureIssueWorktree,
  type IssueContext,
  reapIssue,
  reserveIssueWorktree,
  type Worktree,
  type WorktreeGit,
} from "./issue-worktree.ts";
import { pushRefusal } from "./push-rules.ts";
import {
  checkRemoteUrl,
  createMirror,
  fetchMirror,
  type GitCredential,
  PushRefusedError,
  pushBranch,
  type RemoteAccess,
} from "./remote.ts";
import { branchName, NAME_PART, resolveRef, slug } from "./repository.ts";
import { createStepCheckout, fileIdsAt, type StepCheckoutContext } from "./step-checkout.ts";

export { type Author, DEFAULT_AUTHOR, type Worktree, type WorktreeGit } from "./issue-worktree.ts";
export { type GitCredential, PushRefusedError, PushRejectedError } from "./remote.ts";
export { branchName } from "./repository.ts";

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
 *
 * `Workspace` keeps the paths and each repository's queue; the git work is in remote.ts (fetch and push),
 * issue-worktree.ts, agent-worktree.ts and repository.ts (helpers), which it lends what they need.
 */
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

/** What a job knows of its branch: the name it was given and the head the Worker last recorded. */
export type PushOptions = { branch?: string; lease?: string | null };

export class Workspace {
  readonly workDir: string;
  readonly #remote: RemoteAccess;
  readonly #author: Author;
  readonly #remoteUrls = new Map<string, string>();
  readonly #queues = new Map<string, Promise<void>>();
  readonly #worktreeGit: WorktreeGit;
  /** Worktrees reserved for a session that may be starting in them, until `ensureWorktree` fills them. */
  readonly #reserved = new Set<string>();

  constructor(options: WorkspaceOptions) {
    mkdirSync(options.workDir, { recursive: true });
    // Paths bound into sandboxes and written into alternates files are compared resolved.
    this.workDir = realpathSync(options.workDir);
    this.#remote = {
      credential: options.credential,
      timeoutMs: options.remoteTimeoutMs ?? REMOTE_TIMEOUT_MS,
    };
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

  /** Where one agent run's worktree lives: its own, gone when the run ends. */
  agentWorktreePath(repoKey: string, runId: string): string {
    if (!NAME_PART.test(runId) || runId.startsWith("."))
      throw new Error(`bad run id: ${JSON.stringify(runId)}`);
    return join(this.workDir, "agent-runs", slug(repoKey), runId);
  }

  /** The private repositories this process has fetched, with their remotes: what `mirror-warmer.ts` refreshes. */
  knownMirrors(): (RepoRef & { remoteUrl: string })[] {
    return [...this.#remoteUrls].map(([repoKey, remoteUrl]) => ({ repoKey, remoteUrl }));
  }

  /** Creates the mirror on first use, fetches otherwise; returns its path. */
  async ensureMirror({ repoKey, remoteUrl }: RepoRef & { remoteUrl: string }): Promise<string> {
    checkRemoteUrl(remoteUrl, this.#remote.credential);
    const mirror = this.mirrorPath(repoKey);
    return this.#serial(repoKey, async () => {
      if (existsSync(mirror)) await fetchMirror(this.#remote, mirror, remoteUrl);
      else await createMirror(this.#remote, mirror, remoteUrl);
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
  async ensureWorktree(ref: IssueRef & { baseBranch: string }): Promise<Worktree> {
    const issue = this.#issue(ref);
    this.#reserved.delete(issue.worktree);
    return ensureIssueWorktree(issue, ref.baseBranch);
  }

  /**
   * The issue's worktree directory, made ahead of its content where no earlier job's worktree is, so that its
   * session can start while `ensureMirror` and `ensureWorktree` run (issue-worktree.ts). True when it did:
   * `ensureWorktree` then fills that directory in place; false leaves everything to `ensureWorktree`.
   */
  async reserveWorktree(ref: IssueRef): Promise<boolean> {
    const reserved = await reserveIssueWorktree(this.#issue(ref));
    if (reserved) this.#reserved.add(this.worktreePath(ref));
    return reserved;
  }

  /**
   * A fresh worktree of the base branch's head on no branch, after `ensureMirror`, for one agent run: nothing
   * in it is ever collected or pushed.
   */
  async agentWorktree({ repoKey, baseBranch, runId }: RepoRef & { baseBranch: string; runId: string }) {
    return createAgentWorktree(this.#agentRun(repoKey, runId), baseBranch);
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
    const agentRun = this.#agentRun(repoKey, runId);
    const remoteUrl = this.#remoteUrls.get(repoKey);
    if (remoteUrl === undefined) throw new Error(`reviewWorktree(${repoKey}) before ensureMirror`);
    const remote = { access: this.#remote, remoteUrl };
    return createReviewWorktree(agentRun, { baseBranch, ref, headSha }, remote);
  }

  async removeAgentWorktree(repoKey: string, runId: string): Promise<void> {
    return removeAgentWorktree(this.#agentRun(repoKey, runId));
  }

  /**
   * Checks `commit` out at `path` (a directory of the runner's, outside every session's reach) for an action's
   * steps to run from, after `ensureMirror`: step-checkout.ts.
   */
  async stepCheckout(repoKey: string, path: string, at: { commit: string; baseBranch: string }) {
    return createStepCheckout(this.#steps(repoKey), path, at);
  }

  /** The regular files among `paths` at `commit`, by blob id: what an approved step's command runs. */
  async fileIdsAt(repoKey: string, commit: string, paths: readonly string[]) {
    return fileIdsAt(this.#steps(repoKey), commit, paths);
  }

  /** The base branch's head as last fetched, if the remote has the branch. */
  async baseHead(repoKey: string, baseBranch: string): Promise<string | undefined> {
    return resolveRef(this.mirrorPath(repoKey), `refs/remotes/origin/${baseBranch}`);
  }

  /**
   * Commits whatever the agent left uncommitted in the issue's worktree (through `WorktreeGit`: the agent's
   * repository), then takes the branch's commits into the private repository. Returns the branch's head
   * there, and whether a commit of leftovers was made.
   */
  async collect(ref: IssueRef, message: string): Promise<{ sha: string; committedLeftovers: boolean }> {
    const bundles = join(this.workDir, "bundles");
    return collectIssueBranch(this.#issue(ref), message, { author: this.#author, bundles });
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
    return pushBranch(this.#remote, this.mirrorPath(repoKey), remoteUrl, { branch, lease });
  }

  /** Removes the issue's worktree and local branch; safe to repeat. The pushed branch stays. */
  async reap(ref: IssueRef): Promise<void> {
    return reapIssue(this.#issue(ref));
  }

  /**
   * Where the issue's branch (as the private repository has it) conflicts with the base as last fetched, and
   * what landed on the base since the branch left it (subjects, newest first, at most `maxLanded`): what an
   * update job's session is told. Empty `files` when the two merge cleanly.
   */
  async conflictWithBase(
    ref: IssueRef,
    baseBranch: string,
    maxLanded = 20,
  ): Promise<{ files: string[]; landed: string[] }> {
    return conflictWithBase(this.#issue(ref), baseBranch, maxLanded);
  }

  /**
   * What the branch changed since it left the base (committed work only), for a recovery prompt: from the
   * private repository, where `ensureWorktree` recorded the commit the worktree started from.
   */
  async diffAgainstBase(ref: IssueRef, baseBranch: string): Promise<string> {
    return diffAgainstBase(this.#issue(ref), baseBranch);
  }

  #issue({ repoKey, issueNumber }: IssueRef): IssueContext {
    return {
      repoKey,
      issueNumber,
      mirror: this.mirrorPath(repoKey),
      objects: this.objectsPath(repoKey),
      worktree: this.worktreePath({ repoKey, issueNumber }),
      reserved: this.#reserved.has(this.worktreePath({ repoKey, issueNumber })),
      worktreeGit: this.#worktreeGit,
      serial: (task) => this.#serial(repoKey, task),
    };
  }

  #steps(repoKey: string): StepCheckoutContext {
    return { mirror: this.mirrorPath(repoKey), serial: (task) => this.#serial(repoKey, task) };
  }

  #agentRun(repoKey: string, runId: string): AgentRunContext {
    return {
      repoKey,
      runId,
      worktree: this.agentWorktreePath(repoKey, runId),
      mirror: this.mirrorPath(repoKey),
      serial: (task) => this.#serial(repoKey, task),
    };
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

/** Forge-neutral shapes returned by every forge client. Numbers are issue / pull request numbers. */
import type { Mergeability } from "../../domain/stay-current.ts";
import type { PostBody, PostTitle } from "../post/post.ts";

/**
 * What a client's posting methods take. Conveyor's own client (`clientOf`, src/projects/store.ts) takes only
 * `Posted` text, which src/forge/post makes: nothing Conveyor did not write reaches the forge undefused. A
 * person's client (tests, the demo, the CLI's setup) takes any text.
 */
export type Texts = { body: string; title: string };
export type Posted = { body: PostBody; title: PostTitle };
export type Plain = Texts;

export type ForgeKind = "forgejo" | "gitea" | "github";

export type IssueState = "open" | "closed";

export interface Issue {
  number: number;
  title: string;
  body: string;
  state: IssueState;
  labels: string[];
  /** Login of the author. */
  author: string;
  isPullRequest: boolean;
}

/**
 * An issue or pull request as a listing shows it: the forge's times (ISO 8601, as sent) of its opening, last
 * change and closing (null while open; a forge that sends none: null), and its comment count.
 */
export type UpdatedIssue = Issue & {
  updatedAt: string;
  createdAt: string | null;
  closedAt: string | null;
  comments: number;
};

/** One page of a listing of open issues and pull requests, newest opened first; `more`: another page follows. */
export type OpenPage = { items: UpdatedIssue[]; more: boolean; forgeTime: number | null };

/**
 * A listing of updated items (an item may be listed twice), the forge's clock when it answered its first page
 * (null: no `Date`), and a time the listing may have slid past, which the next must start from again.
 */
export type UpdatedListing = { items: UpdatedIssue[]; forgeTime: number | null; heldAt: string | null };

export interface IssueComment {
  id: number;
  body: string;
  author: string;
  /** ISO 8601, as the forge sent it. */
  createdAt: string;
}

export interface NewPullRequest<T extends Texts = Posted> {
  /** Branch name (or `owner:branch` for a fork). */
  head: string;
  base: string;
  title: T["title"];
  body: T["body"];
}

export interface CreatedPullRequest {
  number: number;
  /** Web page of the pull request. */
  url: string;
  headSha: string;
}

export interface PullRequestUpdate<T extends Texts = Posted> {
  title?: T["title"];
  body?: T["body"];
  state?: IssueState;
}

export interface PullRequest {
  number: number;
  state: IssueState;
  merged: boolean;
  /**
   * null: the forge has not computed it yet (GitHub). Gitea/Forgejo never send null; there `false` also
   * covers "still checking", so re-read before treating it as a conflict.
   */
  mergeable: boolean | null;
  headRef: string;
  headSha: string;
  baseRef: string;
}

/** A pull request as a list of them shows it: GitHub's list shape says nothing of merging. */
export type ListedPullRequest = Pick<PullRequest, "number" | "state" | "headRef" | "headSha" | "baseRef">;

/** An open pull request as a listing shows it, with what its author wrote. */
export type OpenPullRequest = ListedPullRequest & Pick<Issue, "title" | "body" | "labels" | "author">;

/**
 * One file of a pull request as the forge lists it. `status` is the forge's word, passed through: GitHub's
 * added, removed, modified, renamed, copied, changed, unchanged; Gitea's added, deleted, changed, renamed,
 * copied, unchanged. Binary files count no lines on either forge.
 */
export interface ChangedFile {
  path: string;
  /** The path before a rename or copy. */
  previousPath: string | null;
  status: string;
  additions: number;
  deletions: number;
}

/** `complete` is false when the forge cut the list short (GitHub lists at most 3000 files). */
export interface PullRequestFiles {
  files: ChangedFile[];
  complete: boolean;
}

export type CommitState = "pending" | "success" | "failure" | "error";

export interface CommitStatus {
  context: string;
  state: CommitState;
  targetUrl: string | null;
  description: string | null;
}

/** A GitHub check run. `status`: queued, in_progress, completed (and the newer waiting, requested, pending). */
export interface CheckRun {
  id: number;
  name: string;
  status: string;
  /** null until completed; success, failure, neutral, cancelled, skipped, timed_out, action_required, stale… */
  conclusion: string | null;
  /** The suite the run belongs to (one per app and commit; GitHub Actions: one per workflow run). */
  suiteId: number | null;
  detailsUrl: string | null;
  /** The run's output title and summary, where it gave them. */
  summary: string | null;
}

/** A GitHub check suite: all of one app's (or one workflow run's) check runs on a commit. */
export interface CheckSuite {
  id: number;
  /** The app's slug (`github-actions`): the suite's name for the required set. */
  app: string;
  status: string;
  conclusion: string | null;
}

/** Everything the forge holds on one commit's CI. Forges without checks (Gitea, Forgejo) report none. */
export interface CiReport {
  statuses: CommitStatus[];
  checkRuns: CheckRun[];
  checkSuites: CheckSuite[];
}

export interface CombinedStatus {
  state: CommitState;
  statuses: CommitStatus[];
}

export type MergeMethod = "merge" | "squash" | "rebase";

export interface MergeOptions {
  method: MergeMethod;
  /** Merge only if the head is still at this commit. */
  sha?: string;
  /** The merge or squash commit's first line and the rest of its message (a rebase keeps the commits' own). */
  title?: string;
  message?: string;
}

/** The merge methods the repository allows; null where the forge did not say (GitHub, to a token that cannot push). */
export type MergeMethods = Record<MergeMethod, boolean> | null;

/** What branch protection asks of a merge into a branch, as far as the token may read it. */
export interface BranchProtection {
  /** Approving reviews required; null: protected, but the token may not read the rule (GitHub without admin). */
  requiredApprovals: number | null;
  /** Status checks that must pass, by name (on Gitea and Forgejo a name may be a glob: `ci/*`). */
  requiredChecks: string[];
  /**
   * The head must contain the base (GitHub's strict status checks, Gitea's block_on_outdated_branch); null:
   * protected, but the token may not read the rule (neither forge shows it on the branch).
   */
  upToDate: boolean | null;
  /** A code owner must approve (GitHub); on Gitea and Forgejo, pending official review requests block it. */
  codeOwnerReview: boolean;
  /** A push dismisses the approvals given before it: only approvals of the head count. */
  dismissStale: boolean;
}

/** A refused merge is an outcome, not an exception, so an outbox can retry a merge without double effects. */
export type MergeResult =
  | { kind: "merged"; merged: true }
  | { kind: "already_merged"; merged: true }
  | { kind: "not_mergeable"; merged: false; status: number; reason: string };

export type Permission = "admin" | "write" | "read" | "none";

export type ReviewEvent = "APPROVE" | "REQUEST_CHANGES" | "COMMENT";

export interface ReviewComment<T extends Texts = Posted> {
  path: string;
  /** Line in the new version of the file. */
  line: number;
  body: T["body"];
}

/** A review's standing: Gitea's APPROVED / REQUEST_CHANGES / COMMENT and GitHub's words, in one vocabulary. */
export type ReviewState = "approved" | "changes_requested" | "commented" | "dismissed" | "pending";

/** A submitted review of a pull request, as the forge lists it. */
export interface PullReview {
  id: number;
  body: string;
  author: string;
  state: ReviewState;
  /** The head the review was given for. */
  commitId: string | null;
  /** Gitea and Forgejo keep a dismissed review's state and say so here; GitHub's state is `dismissed`. */
  dismissed: boolean;
  /** When it was submitted (a dismissal keeps it); null for a draft. */
  submittedAt: string | null;
}

/** A review's comment on a line of the diff (or on a whole file: no line). */
export interface PullReviewComment {
  id: number;
  path: string;
  /** The line in the new file, or in the old one for a comment on a removed line; null: the whole file. */
  line: number | null;
  /** The diff hunk the comment points into, ending at its line. */
  diffHunk: string;
  body: string;
  author: string;
}

export interface NewReview<T extends Texts = Posted> {
  event: ReviewEvent;
  body: T["body"];
  comments?: ReviewComment<T>[];
}

export interface LabelSpec {
  name: string;
  /** Six hex digits, with or without `#`. */
  color?: string;
  description?: string;
}

export interface NewIssue<T extends Texts = Posted> {
  title: T["title"];
  body: T["body"];
  labels: string[];
}

export interface NewWebhook {
  url: string;
  secret: string;
  /** Forge-specific event names, passed through as they are. */
  events: string[];
}

export interface ForgeClient<T extends Texts = Posted> {
  readonly forge: ForgeKind;
  getIssue(number: number): Promise<Issue>;
  listComments(number: number): Promise<IssueComment[]>;
  /** Every page; issues only (pull requests are left out). */
  listIssuesByLabel(label: string, state?: IssueState | "all"): Promise<Issue[]>;
  /**
   * Every page of the issues and pull requests (open or closed) updated at or after `since` (all without it):
   * a comment, a label, a close or a merge each count as an update.
   */
  listUpdatedSince(since: string | null): Promise<UpdatedListing>;
  /**
   * Page `page` (from 1) of the open issues and pull requests, newest opened first, by offset: an item opened
   * meanwhile shifts the later pages (a repeat), one closed shifts them back (a gap the caller must mind).
   */
  listOpenPage(page: number): Promise<OpenPage>;
  /** Labels missing from the repository are created (as GitHub itself does). */
  addLabels(number: number, names: string[]): Promise<void>;
  /** Idempotent: removing a label that is not on the issue (or not in the repository) succeeds. */
  removeLabel(number: number, name: string): Promise<void>;
  comment(number: number, body: T["body"]): Promise<{ id: number }>;
  createPullRequest(pull: NewPullRequest<T>): Promise<CreatedPullRequest>;
  updatePullRequest(number: number, update: PullRequestUpdate<T>): Promise<void>;
  getPullRequest(number: number): Promise<PullRequest>;
  /** The open pull request from `branch` of this repository into `base`, if there is one. */
  findOpenPullRequest(branch: string, base: string): Promise<ListedPullRequest | null>;
  /** Every open pull request, newest first. */
  listOpenPullRequests(): Promise<OpenPullRequest[]>;
  getPullRequestDiff(number: number): Promise<string>;
  /** Every page of the pull request's changed files. */
  listPullRequestFiles(number: number): Promise<PullRequestFiles>;
  getCombinedStatus(ref: string): Promise<CombinedStatus>;
  /** Statuses, check runs and check suites of exactly this commit. */
  getCiReport(sha: string): Promise<CiReport>;
  /** GitHub Actions: the failed jobs of check suite `suiteId`'s workflow runs run again; how many runs. */
  rerunFailedJobs(suiteId: number): Promise<number>;
  /** The commit a branch points at; null when the branch does not exist. */
  getBranchHead(branch: string): Promise<string | null>;
  /** The parents of commit `sha`, first parent first (a merge commit has two). */
  getCommitParents(sha: string): Promise<string[]>;
  /**
   * The files directly in `dir` at `ref` (path → text), in path order; past the first `maxFiles` their paths
   * only (empty text). A missing directory is an empty map.
   */
  readDirectory(dir: string, ref: string, maxFiles: number): Promise<Map<string, string>>;
  /**
   * The git blob ids of those of `paths` that are regular files at `ref` (not directories, symbolic links or
   * submodules), from their directories' listings: path → id. A path that is none is left out.
   */
  fileIds(paths: readonly string[], ref: string): Promise<Map<string, string>>;
  /** The pull request's standing against its base (src/domain/stay-current.ts). */
  getMergeability(number: number): Promise<Mergeability>;
  /**
   * Merges the base into the pull request's head on the forge, if the head is still `expectedHeadSha`:
   * `conflict` when the forge cannot. GitHub does it asynchronously: the new head shows up a moment later.
   */
  updateBranch(number: number, expectedHeadSha: string): Promise<"updated" | "conflict">;
  /** Idempotent: deleting a branch that is gone succeeds. */
  deleteBranch(branch: string): Promise<void>;
  mergePullRequest(number: number, options: MergeOptions): Promise<MergeResult>;
  /** The merge methods the repository allows (`GET /repos/{owner}/{repo}`). */
  getMergeMethods(): Promise<MergeMethods>;
  /**
   * The branch's protection, or null when it has none. What the token may not read (the rule itself needs
   * admin rights on both forges) is read from the branch as far as it shows it. `branchOnly`: only what the
   * branch shows (its required checks among it), one conditional read anyone may make, never the rule.
   */
  getBranchProtection(branch: string, options?: { branchOnly?: boolean }): Promise<BranchProtection | null>;
  closeIssue(number: number): Promise<void>;
  /** Replaces the issue's body. */
  editIssueBody(number: number, body: T["body"]): Promise<void>;
  createIssue(issue: NewIssue<T>): Promise<{ number: number }>;
  /** Unknown users read as "none". */
  getPermission(username: string): Promise<Permission>;
  /** The login of the token's own user (`GET /user`): Conveyor's account on the forge. */
  getAuthenticatedUser(): Promise<string>;
  createReview(number: number, review: NewReview<T>): Promise<{ id: number }>;
  /** Every page of the pull request's reviews, oldest first. */
  listReviews(number: number): Promise<PullReview[]>;
  /** Every page of one review's comments on lines. */
  listReviewComments(number: number, reviewId: number): Promise<PullReviewComment[]>;
  ensureLabels(labels: ReadonlyArray<string | LabelSpec>): Promise<void>;
  createWebhook(hook: NewWebhook): Promise<{ id: number }>;
}

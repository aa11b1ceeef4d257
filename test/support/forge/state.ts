import { z } from "zod";

// The local forge's whole state: one JSON document, validated with these schemas when it is loaded. Git data
// lives in bare repositories next to it; `branches` mirrors their heads so the API never has to ask git.

const id = z.number().int().positive();
const time = z.string();
const sha = z.string().regex(/^[0-9a-f]{40}$/);

export const collaboratorLevel = z.enum(["read", "write", "admin"]);
export type CollaboratorLevel = z.output<typeof collaboratorLevel>;

const user = z.object({
  id,
  login: z.string(),
  email: z.string(),
  fullName: z.string(),
  isAdmin: z.boolean(),
  createdAt: time,
});
export type User = z.output<typeof user>;

const token = z.object({ id, userId: id, name: z.string(), value: z.string(), createdAt: time });

const label = z.object({
  id,
  name: z.string(),
  /** Six lowercase hex digits, no `#`. */
  color: z.string(),
  description: z.string(),
});
export type Label = z.output<typeof label>;

const comment = z.object({ id, posterId: id, body: z.string(), createdAt: time, updatedAt: time });
export type Comment = z.output<typeof comment>;

const reviewState = z.enum(["APPROVED", "REQUEST_CHANGES", "COMMENT", "PENDING"]);
export type ReviewState = z.output<typeof reviewState>;

const review = z.object({
  id,
  reviewerId: id,
  state: reviewState,
  body: z.string(),
  commitId: sha,
  submittedAt: time,
  comments: z.array(
    z.object({
      id,
      path: z.string(),
      line: z.number().int(),
      body: z.string(),
      /** The diff hunk as Gitea cuts it when the comment is made: up to the commented line. */
      hunk: z.string().default(""),
    }),
  ),
  /** Gitea keeps a dismissed review's state and marks it dismissed. */
  dismissed: z.boolean().default(false),
});
export type Review = z.output<typeof review>;

const pull = z.object({
  headBranch: z.string(),
  baseBranch: z.string(),
  headSha: sha,
  mergeBase: sha,
  /** Whether the head merges into the base without conflicts; recomputed whenever either moves. */
  mergeable: z.boolean(),
  /** How many more reads find the forge still re-checking it after its head or base moved (see `checking`). */
  checkingReads: z.number().int().optional(),
  merged: z.boolean(),
  mergedAt: time.nullable(),
  mergedById: id.nullable(),
  mergeCommitSha: sha.nullable(),
  reviews: z.array(review),
});
export type Pull = z.output<typeof pull>;

const issue = z.object({
  id,
  /** The number shown to users; issues and pull requests share one sequence per repository. */
  index: id,
  posterId: id,
  title: z.string(),
  body: z.string(),
  state: z.enum(["open", "closed"]),
  labelIds: z.array(id),
  comments: z.array(comment),
  createdAt: time,
  updatedAt: time,
  closedAt: time.nullable(),
  pull: pull.nullable(),
});
export type Issue = z.output<typeof issue>;

export const statusState = z.enum(["pending", "success", "error", "failure", "warning"]);
export type StatusState = z.output<typeof statusState>;

const commitStatus = z.object({
  id,
  /** Per commit, as Gitea numbers them (the API's `id`). */
  index: id,
  sha,
  context: z.string(),
  state: statusState,
  targetUrl: z.string(),
  description: z.string(),
  creatorId: id,
  createdAt: time,
});
export type CommitStatus = z.output<typeof commitStatus>;

/** GitHub's checks: a suite per app (the user that posts its runs) and commit; its state follows its runs. */
const checkSuite = z.object({ id, sha, appUserId: id, createdAt: time });
export type CheckSuite = z.output<typeof checkSuite>;

export const checkStatus = z.enum(["queued", "in_progress", "completed"]);
export const checkConclusion = z.enum([
  "success",
  "failure",
  "neutral",
  "cancelled",
  "skipped",
  "timed_out",
  "action_required",
  "stale",
]);

const checkRun = z.object({
  id,
  suiteId: id,
  sha,
  name: z.string(),
  status: checkStatus,
  conclusion: checkConclusion.nullable(),
  detailsUrl: z.string().nullable(),
  title: z.string().nullable(),
  summary: z.string().nullable(),
  startedAt: time,
  completedAt: time.nullable(),
});
export type CheckRun = z.output<typeof checkRun>;

export const hookType = z.enum(["forgejo", "gitea"]);

const hook = z.object({
  id,
  type: hookType,
  /** Deliveries are always `application/json` (content type "form" is not supported). */
  url: z.string(),
  secret: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  createdAt: time,
  updatedAt: time,
});
export type Hook = z.output<typeof hook>;

/** The merge styles the repository allows (Gitea's `allow_merge_commits`, `allow_squash_merge`, `allow_rebase`). */
const mergeStyles = z.object({ merge: z.boolean(), squash: z.boolean(), rebase: z.boolean() });
export type MergeStyles = z.output<typeof mergeStyles>;

/**
 * A branch protection rule, as Gitea keeps it (GitHub's maps onto it): `ruleName` names the branch (Gitea
 * also takes globs; here, the branch's own name).
 */
const protection = z.object({
  id,
  ruleName: z.string(),
  requiredApprovals: z.number().int().min(0),
  enableStatusCheck: z.boolean(),
  /** Required status check contexts; `*` matches any run of characters, as Gitea's globs do. */
  statusCheckContexts: z.array(z.string()),
  blockOnOutdatedBranch: z.boolean(),
  blockOnRejectedReviews: z.boolean(),
  dismissStaleApprovals: z.boolean(),
  /** GitHub's require_code_owner_reviews (Gitea's rule has no such field: read there as official reviews). */
  requireCodeOwnerReviews: z.boolean(),
  createdAt: time,
  updatedAt: time,
});
export type Protection = z.output<typeof protection>;

const repo = z.object({
  id,
  owner: z.string(),
  name: z.string(),
  description: z.string(),
  private: z.boolean(),
  defaultBranch: z.string(),
  createdAt: time,
  /** Branch name → head commit. */
  branches: z.record(z.string(), sha),
  collaborators: z.array(z.object({ userId: id, level: collaboratorLevel })),
  labels: z.array(label),
  issues: z.array(issue),
  statuses: z.array(commitStatus),
  checkSuites: z.array(checkSuite).default([]),
  checkRuns: z.array(checkRun).default([]),
  hooks: z.array(hook),
  /** CI command; null: `sh ./ci.sh` when the commit has one. */
  ciCommand: z.string().nullable(),
  mergeStyles: mergeStyles.default({ merge: true, squash: true, rebase: true }),
  protections: z.array(protection).default([]),
});
export type Repo = z.output<typeof repo>;

const delivery = z.object({
  /** The X-*-Delivery uuid. */
  id: z.string(),
  hookId: id,
  repo: z.string(),
  /** Grouped event name (X-*-Event). */
  event: z.string(),
  /** Specific event name (X-*-Event-Type). */
  eventType: z.string(),
  url: z.string(),
  /** The exact bytes sent (as UTF-8 text) and the headers they were sent with. */
  body: z.string(),
  headers: z.record(z.string(), z.string()),
  /** The delivery this one replays. */
  redeliveryOf: z.string().nullable(),
  createdAt: time,
  /** null until the receiver answered (or failed to). */
  status: z.number().int().nullable(),
  responseBody: z.string(),
  /** Why no answer was received (timeout, connection refused). */
  error: z.string().nullable(),
  durationMs: z.number().nullable(),
});
export type Delivery = z.output<typeof delivery>;

const ciStatus = z.enum(["pending", "running", "success", "failure", "error", "killed"]);
export type CiStatus = z.output<typeof ciStatus>;

const ciRun = z.object({
  id,
  repo: z.string(),
  sha,
  branch: z.string(),
  pullNumber: id,
  command: z.string(),
  status: ciStatus,
  exitCode: z.number().int().nullable(),
  createdAt: time,
  startedAt: time.nullable(),
  finishedAt: time.nullable(),
});
export type CiRun = z.output<typeof ciRun>;

export const forgeState = z.object({
  version: z.literal(1),
  /** One sequence for every id (users, tokens, repositories, issues, labels, …). */
  lastId: z.number().int().nonnegative(),
  users: z.array(user),
  tokens: z.array(token),
  repos: z.array(repo),
  deliveries: z.array(delivery),
  ciRuns: z.array(ciRun),
});
export type ForgeState = z.output<typeof forgeState>;

export function emptyState(): ForgeState {
  return { version: 1, lastId: 0, users: [], tokens: [], repos: [], deliveries: [], ciRuns: [] };
}

/**
 * Whether the forge is re-checking the pull request: as Gitea, it then answers `mergeable: false` and refuses
 * to merge ("Please try again later") until its background check is done. The check lasts a number of reads
 * (of the pull request, or merge attempts), not of milliseconds: a test lands its reads inside it however
 * loaded the machine is.
 */
export function checking(pull: Pull): boolean {
  if ((pull.checkingReads ?? 0) <= 0) return false;
  pull.checkingReads = (pull.checkingReads ?? 0) - 1;
  return true;
}

/**
 * Response shapes, reduced to the fields the clients read and mapped to the forge-neutral types. Gitea's API
 * v1 copies GitHub's field names for issues, comments, labels, pull requests and collaborator permissions;
 * where the two differ (null on one forge, absent on the other) one schema accepts both. Commit statuses
 * differ in substance and have one schema per forge.
 */
import { z } from "zod";
import { toCommitState, toPermission } from "./normalize.ts";
import type {
  ChangedFile,
  CheckRun,
  CheckSuite,
  CombinedStatus,
  Issue,
  IssueComment,
  ListedPullRequest,
  OpenPullRequest,
  PullRequest,
  PullReview,
  PullReviewComment,
  ReviewState,
  UpdatedIssue,
} from "./types.ts";

export const login = z.object({ login: z.string() });
const openOrClosed = z.enum(["open", "closed"]);

export const withId = z.object({ id: z.number() });
export const withNumber = z.object({ number: z.number() });

export const repoLabel = z.object({ id: z.number(), name: z.string() });

// GitHub's description allows plain names in an issue's labels (and a label object without its name);
// Gitea may send null for none.
const issueLabels = z.array(z.union([z.string(), z.object({ name: z.string().nullish() })])).nullish();

const issueFields = z.object({
  number: z.number(),
  title: z.string(),
  body: z.string().nullish(),
  state: openOrClosed,
  labels: issueLabels,
  user: login.nullish(),
  // Set exactly when the issue is a pull request: absent on GitHub, null on Gitea otherwise.
  pull_request: z.object({}).nullish(),
});

const toIssue = (raw: z.output<typeof issueFields>): Issue => ({
  number: raw.number,
  title: raw.title,
  body: raw.body ?? "",
  state: raw.state,
  labels: (raw.labels ?? []).flatMap((label) => (typeof label === "string" ? [label] : (label.name ?? []))),
  author: raw.user?.login ?? "",
  isPullRequest: raw.pull_request != null,
});

export const issue = issueFields.transform(toIssue);

/** An issue or pull request in a listing by update time. */
export const updatedIssue = issueFields
  .extend({
    updated_at: z.string(),
    created_at: z.string().nullish(),
    closed_at: z.string().nullish(),
    comments: z.number().nullish(),
  })
  .transform(
    (raw): UpdatedIssue => ({
      ...toIssue(raw),
      updatedAt: raw.updated_at,
      createdAt: raw.created_at ?? null,
      closedAt: raw.closed_at ?? null,
      comments: raw.comments ?? 0,
    }),
  );

export const comment = z
  .object({
    id: z.number(),
    body: z.string().nullish(),
    user: login.nullish(),
    // Gitea: comments migrated from another forge name only their original author.
    original_author: z.string().nullish(),
    created_at: z.string(),
  })
  .transform(
    (raw): IssueComment => ({
      id: raw.id,
      body: raw.body ?? "",
      author: raw.user?.login || raw.original_author || "",
      createdAt: raw.created_at,
    }),
  );

/**
 * Both forges' review states as one word each (Gitea's REQUEST_REVIEW is a request, not a verdict: pending;
 * a state a forge adds later reads as commented, which decides nothing).
 */
const REVIEW_STATES: Record<string, ReviewState> = {
  APPROVED: "approved",
  REQUEST_CHANGES: "changes_requested",
  CHANGES_REQUESTED: "changes_requested",
  COMMENT: "commented",
  COMMENTED: "commented",
  DISMISSED: "dismissed",
  PENDING: "pending",
  REQUEST_REVIEW: "pending",
};

export const review = z
  .object({
    id: z.number(),
    body: z.string().nullish(),
    user: login.nullish(),
    state: z.string().nullish(),
    commit_id: z.string().nullish(),
    // Gitea keeps a dismissed review's state and says so here; GitHub's state becomes DISMISSED.
    dismissed: z.boolean().nullish(),
    submitted_at: z.string().nullish(),
  })
  .transform(
    (raw): PullReview => ({
      id: raw.id,
      body: raw.body ?? "",
      author: raw.user?.login ?? "",
      state: raw.dismissed ? "dismissed" : (REVIEW_STATES[(raw.state ?? "").toUpperCase()] ?? "commented"),
      commitId: raw.commit_id ?? null,
      dismissed: raw.dismissed === true,
      submittedAt: raw.submitted_at ?? null,
    }),
  );

const reviewCommentFields = {
  id: z.number(),
  path: z.string(),
  diff_hunk: z.string().nullish(),
  body: z.string().nullish(),
  user: login.nullish(),
};

const toReviewComment = (
  raw: z.output<z.ZodObject<typeof reviewCommentFields>>,
  line: number | null,
): PullReviewComment => ({
  id: raw.id,
  path: raw.path,
  line,
  diffHunk: raw.diff_hunk ?? "",
  body: raw.body ?? "",
  author: raw.user?.login ?? "",
});

/** GitHub: `line` on the diff's side it comments, `original_line` once outdated, neither on a whole file. */
export const githubReviewComment = z
  .object({ ...reviewCommentFields, line: z.number().nullish(), original_line: z.number().nullish() })
  .transform((raw) => toReviewComment(raw, raw.line ?? raw.original_line ?? null));

/** Gitea: `position` is the new file's line and `original_position` the old one's; 0 is none. */
export const giteaReviewComment = z
  .object({ ...reviewCommentFields, position: z.number().nullish(), original_position: z.number().nullish() })
  .transform((raw) => toReviewComment(raw, raw.position || raw.original_position || null));

export const pullRequest = z
  .object({
    number: z.number(),
    state: openOrClosed,
    merged: z.boolean(),
    // GitHub: null while it computes mergeability. Gitea: always a boolean.
    mergeable: z.boolean().nullable(),
    html_url: z.string(),
    head: z.object({ ref: z.string(), sha: z.string() }),
    base: z.object({ ref: z.string() }),
  })
  .transform((raw): PullRequest & { url: string } => ({
    number: raw.number,
    state: raw.state,
    merged: raw.merged,
    mergeable: raw.mergeable,
    headRef: raw.head.ref,
    headSha: raw.head.sha,
    baseRef: raw.base.ref,
    url: raw.html_url,
  }));

/**
 * A pull request in a list (`GET /pulls`): GitHub lists its shorter shape (pull-request-simple: no `merged`,
 * no `mergeable`), Gitea its full one; only what both send is read.
 */
export const listedPullRequest = z
  .object({
    number: z.number(),
    state: openOrClosed,
    head: z.object({ ref: z.string(), sha: z.string() }),
    base: z.object({ ref: z.string() }),
  })
  .transform(
    (raw): ListedPullRequest => ({
      number: raw.number,
      state: raw.state,
      headRef: raw.head.ref,
      headSha: raw.head.sha,
      baseRef: raw.base.ref,
    }),
  );

/** An open pull request in a listing, with its author's words. */
export const openPullRequest = issueFields
  .omit({ pull_request: true })
  .extend({ head: z.object({ ref: z.string(), sha: z.string() }), base: z.object({ ref: z.string() }) })
  .transform(
    (raw): OpenPullRequest => ({
      number: raw.number,
      state: raw.state,
      title: raw.title,
      body: raw.body ?? "",
      labels: toIssue({ ...raw, pull_request: {} }).labels,
      author: raw.user?.login ?? "",
      headRef: raw.head.ref,
      headSha: raw.head.sha,
      baseRef: raw.base.ref,
    }),
  );

/** What a pull request says of its standing against the base: GitHub's and Gitea's fields, each optional. */
export const pullMergeState = z.object({
  mergeable: z.boolean().nullable(),
  mergeable_state: z.string().nullish(),
  merge_base: z.string().nullish(),
  head: z.object({ sha: z.string() }),
  base: z.object({ ref: z.string(), sha: z.string().nullish() }),
  conflicted_files: z.array(z.string()).nullish(),
});
export type PullMergeState = z.infer<typeof pullMergeState>;

/** GitHub's commit-comparison (`GET /compare/{base}...{head}`): the commits of the base the head lacks. */
export const githubComparison = z
  .object({ behind_by: z.number().int().nonnegative() })
  .transform((raw) => raw.behind_by);

/** GitHub's pull request file and Gitea's ChangedFile; Gitea sends `previous_filename` "" when there is none. */
export const changedFile = z
  .object({
    filename: z.string().min(1),
    previous_filename: z.string().nullish(),
    status: z.string(),
    additions: z.number().int().nonnegative(),
    deletions: z.number().int().nonnegative(),
  })
  .transform(
    (raw): ChangedFile => ({
      path: raw.filename,
      previousPath: raw.previous_filename || null,
      status: raw.status,
      additions: raw.additions,
      deletions: raw.deletions,
    }),
  );

export const permission = z
  .object({ permission: z.string() })
  .transform((raw) => toPermission(raw.permission));

/** Gitea's CombinedStatus: `status` per entry, and `state: ""` with `statuses: null` before the first. */
export const giteaCombinedStatus = z
  .object({
    state: z.string(),
    statuses: z
      .array(
        z.object({
          context: z.string(),
          status: z.string(),
          target_url: z.string().nullish(),
          description: z.string().nullish(),
        }),
      )
      .nullish(),
  })
  .transform(
    (raw): CombinedStatus => ({
      state: toCommitState(raw.state),
      statuses: (raw.statuses ?? []).map((status) => ({
        context: status.context,
        state: toCommitState(status.status),
        targetUrl: status.target_url || null,
        description: status.description || null,
      })),
    }),
  );

export const githubCombinedStatus = z
  .object({
    state: z.string(),
    statuses: z.array(
      z.object({
        state: z.string(),
        context: z.string(),
        target_url: z.string().nullable(),
        description: z.string().nullable(),
      }),
    ),
  })
  .transform(
    (raw): CombinedStatus => ({
      state: toCommitState(raw.state),
      statuses: raw.statuses.map((status) => ({
        context: status.context,
        state: toCommitState(status.state),
        targetUrl: status.target_url,
        description: status.description,
      })),
    }),
  );

const sha = z.string().regex(/^[0-9a-f]{40,64}$/);

/** GitHub's Branch (`commit.sha`). */
export const githubBranch = z.object({ commit: z.object({ sha }) }).transform((raw) => raw.commit.sha);
/** Gitea's Branch: its `commit` is a PayloadCommit (`commit.id`). */
export const giteaBranch = z.object({ commit: z.object({ id: sha }) }).transform((raw) => raw.commit.id);
/** A commit's parents, first first: GitHub's `GET /commits/{ref}` and Gitea's `GET /git/commits/{sha}` alike. */
export const commitParents = z
  .object({ parents: z.array(z.object({ sha })).nullable() })
  .transform((raw) => (raw.parents ?? []).map((parent) => parent.sha));

/** GitHub's `GET /commits/{ref}/check-runs`. */
export const githubCheckRuns = z
  .object({
    total_count: z.number().int().min(0),
    check_runs: z.array(
      z.object({
        id: z.number(),
        name: z.string(),
        status: z.string(),
        conclusion: z.string().nullable(),
        details_url: z.string().nullish(),
        output: z.object({ title: z.string().nullish(), summary: z.string().nullish() }).nullish(),
        check_suite: z.object({ id: z.number() }).nullish(),
      }),
    ),
  })
  .transform((raw) => ({
    total: raw.total_count,
    items: raw.check_runs.map(
      (run): CheckRun => ({
        id: run.id,
        name: run.name,
        status: run.status,
        conclusion: run.conclusion,
        suiteId: run.check_suite?.id ?? null,
        detailsUrl: run.details_url || null,
        summary: [run.output?.title, run.output?.summary].filter(Boolean).join(": ") || null,
      }),
    ),
  }));

/** GitHub's `GET /commits/{ref}/check-suites`. */
export const githubCheckSuites = z
  .object({
    total_count: z.number().int().min(0),
    check_suites: z.array(
      z.object({
        id: z.number(),
        status: z.string().nullable(),
        conclusion: z.string().nullable(),
        // The app's slug is optional in GitHub's description.
        app: z.object({ slug: z.string().nullish() }).nullable(),
      }),
    ),
  })
  .transform((raw) => ({
    total: raw.total_count,
    items: raw.check_suites.map(
      (suite): CheckSuite => ({
        id: suite.id,
        app: suite.app?.slug ?? "unknown app",
        status: suite.status ?? "queued",
        conclusion: suite.conclusion,
      }),
    ),
  }));

/** GitHub's `GET /actions/runs` (a repository's workflow runs, here those of one check suite). */
export const githubWorkflowRuns = z.object({
  total_count: z.number().int().min(0),
  workflow_runs: z.array(
    z.object({ id: z.number(), status: z.string().nullable(), conclusion: z.string().nullable() }),
  ),
});

/**
 * Forge-neutral events: what the rest of Conveyor consumes from a webhook delivery, whichever forge sent it.
 * Strings the forge may omit are normalized: missing bodies become "", missing URLs/descriptions null.
 */

export type Forge = "forgejo" | "gitea" | "github";

/** Where the event happened and who caused it; on every event. */
export type EventOrigin = {
  forge: Forge;
  /** `owner/name` */
  repository: string;
  /** Login of the user (or bot) whose action caused the delivery. */
  sender: string;
};

/**
 * `labels_updated` is Gitea/Forgejo's `label_updated` / `label_cleared`, which say neither which label
 * changed nor whether it was added or removed. For every action, `labels` is the complete set after the
 * change.
 */
export type LabelAction = "labeled" | "unlabeled" | "labels_updated";

export type IssueEvent = EventOrigin & {
  type: "issue";
  action: "opened" | "edited" | "closed" | "reopened" | LabelAction;
  issue: {
    number: number;
    title: string;
    body: string;
    state: "open" | "closed";
    labels: string[];
    author: string;
    /** The forge's times (ISO 8601) as the payload carries them; null where it does not. */
    createdAt?: string | null;
    updatedAt?: string | null;
    closedAt?: string | null;
    /** Absent where the payload does not say. */
    comments?: number;
  };
  /** The label added or removed, for `labeled` / `unlabeled` when the forge names it; otherwise null. */
  label: string | null;
};

export type CommentEvent = EventOrigin & {
  type: "comment";
  action: "created" | "edited" | "deleted";
  comment: {
    /** Issue or pull request number (they share one number space on every supported forge). */
    issueNumber: number;
    isPullRequest: boolean;
    commentId: number;
    body: string;
    author: string;
  };
};

export type PullRequestEvent = EventOrigin & {
  type: "pull_request";
  /** `merged` is a close with the merged flag set; `closed` is a close without merging. */
  action: "opened" | "synchronized" | "closed" | "merged" | "reopened" | "edited" | LabelAction;
  pullRequest: {
    number: number;
    title: string;
    body: string;
    /** Branch name without `refs/heads/`. */
    headRef: string;
    headSha: string;
    /** `owner/name` of the repository the head branch lives in (a fork's), null when the forge names none. */
    headRepository: string | null;
    baseRef: string;
    merged: boolean;
    author: string;
    labels: string[];
    /** Null where a partial payload does not say. */
    state: "open" | "closed" | null;
    /** The forge's times (ISO 8601) and comment count, where it sends them: the mirror's dates. */
    createdAt: string | null;
    updatedAt: string | null;
    closedAt: string | null;
    comments?: number;
  };
  /** As on {@link IssueEvent}. */
  label: string | null;
};

export type ReviewState = "approved" | "changes_requested" | "commented" | "dismissed";

export type ReviewEvent = EventOrigin & {
  type: "review";
  review: {
    pullNumber: number;
    /** Null on Gitea/Forgejo: their review webhooks carry no review id. */
    reviewId: number | null;
    state: ReviewState;
    body: string;
    author: string;
    /** Commit the review applies to (Gitea/Forgejo: the PR head when the review was sent). */
    headSha: string;
  };
};

export type CiState = "pending" | "success" | "failure" | "error";
export type CiSource = "status" | "check_run" | "check_suite" | "workflow_run" | "workflow_job";

export type CiEvent = EventOrigin & {
  type: "ci";
  ci: {
    sha: string;
    /**
     * Branches the forge associates with the commit: the head branch of a check/workflow, or for a GitHub
     * `status` every branch whose tip is `sha`. Empty when the forge says nothing (Gitea/Forgejo `status`).
     */
    branches: string[];
    /** Status context, check name, or `<workflow> / <job>`. */
    context: string;
    state: CiState;
    targetUrl: string | null;
    description: string | null;
    source: CiSource;
    /** Pull requests GitHub links to the run (empty for forks and for `status` / `workflow_job`). */
    pullNumbers: number[];
    /** Check-run output (title, summary, text) or the names of failed workflow-job steps. */
    logExcerpt: string | null;
  };
};

export type ForgeEvent = IssueEvent | CommentEvent | PullRequestEvent | ReviewEvent | CiEvent;

export type DeliveryResult = { kind: "event"; event: ForgeEvent } | { kind: "ignored"; reason: string };

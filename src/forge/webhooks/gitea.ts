import { z } from "zod";
import type { CiState, DeliveryResult, IssueEvent, PullRequestEvent, ReviewState } from "./events.ts";
import { parsePayload } from "./payload.ts";
import { emitted, ignoredAction, ignoredEvent, isOneOf, readAction } from "./result.ts";
import {
  datedPull,
  issueFields,
  issueNumber,
  labelNames,
  login,
  optionalText,
  origin,
  pullDates,
  pullHead,
  text,
} from "./schema.ts";

/** Normalizes a Gitea or Forgejo (same payloads) delivery; `eventName` is the specific X-*-Event-Type. */
export function normalizeGitea(forge: "gitea" | "forgejo", eventName: string, body: unknown): DeliveryResult {
  switch (eventName) {
    case "issues":
    case "issue_label":
      return issue(forge, eventName, body);
    case "issue_comment":
    case "pull_request_comment":
      return comment(forge, eventName, body);
    case "pull_request":
    case "pull_request_label":
    case "pull_request_sync":
      return pullRequest(forge, eventName, body);
    case "pull_request_review_approved":
      return review(forge, eventName, body, "approved");
    case "pull_request_review_rejected":
      return review(forge, eventName, body, "changes_requested");
    case "pull_request_review_comment":
      return review(forge, eventName, body, "commented");
    case "status":
      return status(forge, eventName, body);
    default:
      return ignoredEvent(eventName);
  }
}

// Gitea reports any label change as `label_updated` (removing the last one as `label_cleared`) with the new
// label set only.
const ISSUE_ACTIONS = new Map<string, IssueEvent["action"]>([
  ["opened", "opened"],
  ["edited", "edited"],
  ["closed", "closed"],
  ["reopened", "reopened"],
  ["label_updated", "labels_updated"],
  ["label_cleared", "labels_updated"],
]);

const issuePayload = z.object({ ...origin, issue: issueFields });

function issue(forge: "gitea" | "forgejo", eventName: string, body: unknown): DeliveryResult {
  const raw = readAction(eventName, body);
  const action = ISSUE_ACTIONS.get(raw);
  if (action === undefined) return ignoredAction(eventName, raw);
  const { repository, sender, issue } = parsePayload(eventName, issuePayload, body);
  return emitted({
    type: "issue",
    action,
    forge,
    repository: repository.full_name,
    sender,
    issue,
    label: null,
  });
}

const COMMENT_ACTIONS = ["created", "edited", "deleted"] as const;

const commentPayload = z.object({
  ...origin,
  // Newer Gitea says so outright; older ones only set `issue.pull_request`.
  is_pull: z.boolean().nullish(),
  issue: z.object({ number: issueNumber, pull_request: z.object({}).nullish() }),
  comment: z.object({ id: z.number().int(), body: text, user: login }),
});

function comment(forge: "gitea" | "forgejo", eventName: string, body: unknown): DeliveryResult {
  const action = readAction(eventName, body);
  if (!isOneOf(COMMENT_ACTIONS, action)) return ignoredAction(eventName, action);
  const payload = parsePayload(eventName, commentPayload, body);
  return emitted({
    type: "comment",
    action,
    forge,
    repository: payload.repository.full_name,
    sender: payload.sender,
    comment: {
      issueNumber: payload.issue.number,
      isPullRequest: payload.is_pull === true || payload.issue.pull_request != null,
      commentId: payload.comment.id,
      body: payload.comment.body,
      author: payload.comment.user,
    },
  });
}

const PULL_ACTIONS = new Map<string, PullRequestEvent["action"]>([
  ["opened", "opened"],
  ["edited", "edited"],
  ["closed", "closed"],
  ["reopened", "reopened"],
  ["synchronized", "synchronized"],
  ["label_updated", "labels_updated"],
  ["label_cleared", "labels_updated"],
]);

// The top-level `number` is always sent; `pull_request.number` is missing from some captures.
const pullPayload = z.object({
  ...origin,
  number: issueNumber,
  pull_request: z.object({
    title: z.string(),
    body: text,
    merged: z.boolean().nullish(),
    user: login,
    labels: labelNames,
    head: pullHead,
    base: z.object({ ref: z.string() }),
    ...pullDates,
  }),
});

function pullRequest(forge: "gitea" | "forgejo", eventName: string, body: unknown): DeliveryResult {
  const raw = readAction(eventName, body);
  const mapped = PULL_ACTIONS.get(raw);
  if (mapped === undefined) return ignoredAction(eventName, raw);
  const { repository, sender, number, pull_request: pr } = parsePayload(eventName, pullPayload, body);
  const merged = pr.merged === true;
  return emitted({
    type: "pull_request",
    action: mapped === "closed" && merged ? "merged" : mapped,
    forge,
    repository: repository.full_name,
    sender,
    pullRequest: {
      number,
      title: pr.title,
      body: pr.body,
      headRef: pr.head.ref,
      headSha: pr.head.sha,
      headRepository: pr.head.repo?.full_name ?? null,
      baseRef: pr.base.ref,
      merged,
      author: pr.user,
      labels: pr.labels,
      ...datedPull(pr),
    },
    label: null,
  });
}

const reviewPayload = z.object({
  ...origin,
  number: issueNumber,
  commit_id: optionalText,
  pull_request: z.object({ head: z.object({ sha: z.string() }) }),
  review: z.object({ content: text }),
});

// The event type carries the verdict (`review.type` repeats it); the sender is the reviewer. `commit_id` is
// empty in every capture, so the head the PR had when the review was sent stands in for the reviewed commit.
function review(
  forge: "gitea" | "forgejo",
  eventName: string,
  body: unknown,
  state: ReviewState,
): DeliveryResult {
  const action = readAction(eventName, body);
  if (action !== "reviewed") return ignoredAction(eventName, action);
  const payload = parsePayload(eventName, reviewPayload, body);
  return emitted({
    type: "review",
    forge,
    repository: payload.repository.full_name,
    sender: payload.sender,
    review: {
      pullNumber: payload.number,
      reviewId: null,
      state,
      body: payload.review.content,
      author: payload.sender,
      headSha: payload.commit_id ?? payload.pull_request.head.sha,
    },
  });
}

const statusState = z.enum(["pending", "success", "skipped", "failure", "warning", "error"]);

// `warning` is not green: it must never let a merge through.
const STATUS_STATES: Record<z.output<typeof statusState>, CiState> = {
  pending: "pending",
  success: "success",
  skipped: "success",
  failure: "failure",
  warning: "failure",
  error: "error",
};

const statusPayload = z.object({
  ...origin,
  sha: z.string(),
  context: z.string(),
  state: statusState,
  target_url: optionalText,
  description: optionalText,
});

function status(forge: "gitea" | "forgejo", eventName: string, body: unknown): DeliveryResult {
  const payload = parsePayload(eventName, statusPayload, body);
  return emitted({
    type: "ci",
    forge,
    repository: payload.repository.full_name,
    sender: payload.sender,
    ci: {
      sha: payload.sha,
      branches: [],
      context: payload.context,
      state: STATUS_STATES[payload.state],
      targetUrl: payload.target_url,
      description: payload.description,
      source: "status",
      pullNumbers: [],
      logExcerpt: null,
    },
  });
}

import { z } from "zod";
import type { CiEvent, CiState, DeliveryResult, PullRequestEvent } from "./events.ts";
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

/** Normalizes a GitHub delivery; `eventName` is X-GitHub-Event. */
export function normalizeGithub(eventName: string, body: unknown): DeliveryResult {
  switch (eventName) {
    case "issues":
      return issue(eventName, body);
    case "issue_comment":
      return comment(eventName, body);
    case "pull_request":
      return pullRequest(eventName, body);
    case "pull_request_review":
      return review(eventName, body);
    case "status":
      return status(eventName, body);
    case "check_run":
      return checkRun(eventName, body);
    case "check_suite":
      return checkSuite(eventName, body);
    case "workflow_run":
      return workflowRun(eventName, body);
    case "workflow_job":
      return workflowJob(eventName, body);
    default:
      return ignoredEvent(eventName);
  }
}

const labelName = z
  .object({ name: z.string() })
  .nullish()
  .transform((label) => label?.name ?? null);

const ISSUE_ACTIONS = ["opened", "edited", "closed", "reopened", "labeled", "unlabeled"] as const;

const issuePayload = z.object({ ...origin, issue: issueFields, label: labelName });

function issue(eventName: string, body: unknown): DeliveryResult {
  const action = readAction(eventName, body);
  if (!isOneOf(ISSUE_ACTIONS, action)) return ignoredAction(eventName, action);
  const payload = parsePayload(eventName, issuePayload, body);
  return emitted({
    type: "issue",
    action,
    forge: "github",
    repository: payload.repository.full_name,
    sender: payload.sender,
    issue: payload.issue,
    label: payload.label,
  });
}

const COMMENT_ACTIONS = ["created", "edited", "deleted"] as const;

const commentPayload = z.object({
  ...origin,
  issue: z.object({ number: issueNumber, pull_request: z.object({}).nullish() }),
  comment: z.object({ id: z.number().int(), body: text, user: login }),
});

function comment(eventName: string, body: unknown): DeliveryResult {
  const action = readAction(eventName, body);
  if (!isOneOf(COMMENT_ACTIONS, action)) return ignoredAction(eventName, action);
  const payload = parsePayload(eventName, commentPayload, body);
  return emitted({
    type: "comment",
    action,
    forge: "github",
    repository: payload.repository.full_name,
    sender: payload.sender,
    comment: {
      issueNumber: payload.issue.number,
      isPullRequest: payload.issue.pull_request != null,
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
  ["synchronize", "synchronized"],
  ["labeled", "labeled"],
  ["unlabeled", "unlabeled"],
]);

const pullPayload = z.object({
  ...origin,
  pull_request: z.object({
    number: issueNumber,
    title: z.string(),
    body: text,
    merged: z.boolean().nullish(),
    user: login,
    labels: labelNames,
    head: pullHead,
    base: z.object({ ref: z.string() }),
    ...pullDates,
  }),
  label: labelName,
});

function pullRequest(eventName: string, body: unknown): DeliveryResult {
  const raw = readAction(eventName, body);
  const mapped = PULL_ACTIONS.get(raw);
  if (mapped === undefined) return ignoredAction(eventName, raw);
  const { repository, sender, pull_request: pr, label } = parsePayload(eventName, pullPayload, body);
  const merged = pr.merged === true;
  return emitted({
    type: "pull_request",
    action: mapped === "closed" && merged ? "merged" : mapped,
    forge: "github",
    repository: repository.full_name,
    sender,
    pullRequest: {
      number: pr.number,
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
    label,
  });
}

// `edited` only changes the text of a review already seen.
const REVIEW_ACTIONS = ["submitted", "dismissed"] as const;

const reviewPayload = z.object({
  ...origin,
  pull_request: z.object({ number: issueNumber, head: z.object({ sha: z.string() }) }),
  review: z.object({
    id: z.number().int(),
    // Webhooks send lowercase states; the REST API uses uppercase for the same values.
    state: z
      .string()
      .transform((state) => state.toLowerCase())
      .pipe(z.enum(["approved", "changes_requested", "commented", "dismissed"])),
    body: text,
    user: login,
    commit_id: optionalText,
  }),
});

function review(eventName: string, body: unknown): DeliveryResult {
  const action = readAction(eventName, body);
  if (!isOneOf(REVIEW_ACTIONS, action)) return ignoredAction(eventName, action);
  const { repository, sender, pull_request: pr, review } = parsePayload(eventName, reviewPayload, body);
  return emitted({
    type: "review",
    forge: "github",
    repository: repository.full_name,
    sender,
    review: {
      pullNumber: pr.number,
      reviewId: review.id,
      state: review.state,
      body: review.body,
      author: review.user,
      headSha: review.commit_id ?? pr.head.sha,
    },
  });
}

function ciEvent(repository: { full_name: string }, sender: string, ci: CiEvent["ci"]): DeliveryResult {
  return emitted({ type: "ci", forge: "github", repository: repository.full_name, sender, ci });
}

const statusPayload = z.object({
  ...origin,
  sha: z.string(),
  state: z.enum(["pending", "success", "failure", "error"]),
  context: z.string(),
  target_url: optionalText,
  description: optionalText,
  branches: z
    .array(z.object({ name: z.string() }))
    .nullish()
    .transform((branches) => (branches ?? []).map((branch) => branch.name)),
});

function status(eventName: string, body: unknown): DeliveryResult {
  const payload = parsePayload(eventName, statusPayload, body);
  return ciEvent(payload.repository, payload.sender, {
    sha: payload.sha,
    branches: payload.branches,
    context: payload.context,
    state: payload.state,
    targetUrl: payload.target_url,
    description: payload.description,
    source: "status",
    pullNumbers: [],
    logExcerpt: null,
  });
}

const GREEN_CONCLUSIONS = new Set(["success", "neutral", "skipped"]);

/**
 * Checks and workflows: not completed → pending; completed → success for a green conclusion, failure for any
 * other (including ones GitHub may add later: nothing merges on an outcome Conveyor does not know).
 */
function checkState(status: string | null, conclusion: string | null): CiState {
  if (status !== "completed") return "pending";
  // GitHub always sets a conclusion on completion; without one the run's outcome is unknowable.
  if (conclusion === null) return "error";
  return GREEN_CONCLUSIONS.has(conclusion) ? "success" : "failure";
}

const nullableString = z
  .string()
  .nullish()
  .transform((value) => value ?? null);

const pullNumbers = z
  .array(z.object({ number: issueNumber }))
  .nullish()
  .transform((prs) => (prs ?? []).map((pr) => pr.number));

const branchList = optionalText.transform((branch) => (branch === null ? [] : [branch]));

// `requested_action` is a user pressing a check's custom button, not a CI result.
const CHECK_RUN_ACTIONS = ["created", "completed", "rerequested"] as const;

const checkRunPayload = z.object({
  ...origin,
  check_run: z.object({
    name: z.string(),
    head_sha: z.string(),
    status: nullableString,
    conclusion: nullableString,
    html_url: optionalText,
    details_url: optionalText,
    output: z.object({ title: optionalText, summary: optionalText, text: optionalText }).nullish(),
    pull_requests: pullNumbers,
    check_suite: z.object({ head_branch: branchList }).nullish(),
  }),
});

function checkRun(eventName: string, body: unknown): DeliveryResult {
  const action = readAction(eventName, body);
  if (!isOneOf(CHECK_RUN_ACTIONS, action)) return ignoredAction(eventName, action);
  const { repository, sender, check_run: run } = parsePayload(eventName, checkRunPayload, body);
  const output = [run.output?.title, run.output?.summary, run.output?.text].filter((part) => part != null);
  return ciEvent(repository, sender, {
    sha: run.head_sha,
    branches: run.check_suite?.head_branch ?? [],
    context: run.name,
    state: checkState(run.status, run.conclusion),
    targetUrl: run.html_url ?? run.details_url,
    description: null,
    source: "check_run",
    pullNumbers: run.pull_requests,
    logExcerpt: output.length > 0 ? output.join("\n\n") : null,
  });
}

const checkSuitePayload = z.object({
  ...origin,
  check_suite: z.object({
    head_sha: z.string(),
    head_branch: branchList,
    status: nullableString,
    conclusion: nullableString,
    pull_requests: pullNumbers,
    app: z.object({ name: z.string() }).nullish(),
  }),
});

// A suite has no name or page of its own; the app that runs it names it.
function checkSuite(eventName: string, body: unknown): DeliveryResult {
  const { repository, sender, check_suite: suite } = parsePayload(eventName, checkSuitePayload, body);
  return ciEvent(repository, sender, {
    sha: suite.head_sha,
    branches: suite.head_branch,
    context: suite.app?.name ?? "check_suite",
    state: checkState(suite.status, suite.conclusion),
    targetUrl: null,
    description: null,
    source: "check_suite",
    pullNumbers: suite.pull_requests,
    logExcerpt: null,
  });
}

const workflowRunPayload = z.object({
  ...origin,
  workflow_run: z.object({
    name: optionalText,
    path: z.string(),
    head_sha: z.string(),
    head_branch: branchList,
    status: nullableString,
    conclusion: nullableString,
    html_url: optionalText,
    pull_requests: pullNumbers,
  }),
  workflow: z.object({ name: optionalText }).nullish(),
});

function workflowRun(eventName: string, body: unknown): DeliveryResult {
  const {
    repository,
    sender,
    workflow_run: run,
    workflow,
  } = parsePayload(eventName, workflowRunPayload, body);
  return ciEvent(repository, sender, {
    sha: run.head_sha,
    branches: run.head_branch,
    // The run's name can be empty (see fixtures); the workflow file path is always there.
    context: run.name ?? workflow?.name ?? run.path,
    state: checkState(run.status, run.conclusion),
    targetUrl: run.html_url,
    description: null,
    source: "workflow_run",
    pullNumbers: run.pull_requests,
    logExcerpt: null,
  });
}

const workflowJobPayload = z.object({
  ...origin,
  workflow_job: z.object({
    name: z.string(),
    workflow_name: optionalText,
    head_sha: z.string(),
    head_branch: branchList,
    status: nullableString,
    conclusion: nullableString,
    html_url: optionalText,
    steps: z
      .array(z.object({ name: z.string(), conclusion: nullableString }))
      .nullish()
      .transform((steps) => steps ?? []),
  }),
});

function workflowJob(eventName: string, body: unknown): DeliveryResult {
  const { repository, sender, workflow_job: job } = parsePayload(eventName, workflowJobPayload, body);
  const failedSteps = job.steps
    .filter((step) => step.conclusion !== null && !GREEN_CONCLUSIONS.has(step.conclusion))
    .map((step) => `Failed step: ${step.name}`);
  return ciEvent(repository, sender, {
    sha: job.head_sha,
    branches: job.head_branch,
    // GitHub's own display name for a job: "<workflow> / <job>".
    context: job.workflow_name === null ? job.name : `${job.workflow_name} / ${job.name}`,
    state: checkState(job.status, job.conclusion),
    targetUrl: job.html_url,
    description: null,
    source: "workflow_job",
    pullNumbers: [],
    logExcerpt: failedSteps.length > 0 ? failedSteps.join("\n") : null,
  });
}

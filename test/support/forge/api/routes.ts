import { listWorkflowRuns, rerunFailedJobs } from "./actions.ts";
import { deleteBranch, getBranch } from "./branches.ts";
import {
  createCheckRun,
  createCheckSuite,
  listCheckRuns,
  listCheckSuites,
  updateCheckRun,
} from "./checks.ts";
import { createComment, listComments } from "./comments.ts";
import { getCommit } from "./commits.ts";
import { compare } from "./compare.ts";
import { getContents } from "./contents.ts";
import { createHook, deleteHook, listHooks } from "./hooks.ts";
import { createIssue, editIssue, getIssue, listIssues } from "./issues.ts";
import {
  addIssueLabels,
  clearIssueLabels,
  createLabel,
  deleteLabel,
  editLabel,
  getIssueLabels,
  getLabel,
  listLabels,
  removeIssueLabel,
  replaceIssueLabels,
} from "./labels.ts";
import {
  createProtection,
  deleteProtection,
  editProtection,
  editRepo,
  getGithubProtection,
  getProtection,
  listProtections,
  putGithubProtection,
} from "./protection.ts";
import {
  createPullRequest,
  editPull,
  getPull,
  isMerged,
  listPulls,
  merge,
  mergeGithub,
  pullDiff,
  pullFiles,
  updateBranch,
  updateBranchGithub,
} from "./pulls.ts";
import { getCurrentUser, getPermission, getRepo, putCollaborator } from "./repos.ts";
import { dismissReview, listReviewComments, listReviews, submitReview } from "./reviews.ts";
import { type Route, repoRoute, userRoute } from "./router.ts";
import { combinedStatus, createCommitStatus, listCommitStatuses } from "./statuses.ts";

/** The Gitea API v1 subset the local forge serves, below `/api/v1`. */
export const ROUTES: Route[] = [
  userRoute("GET", "/user", getCurrentUser),
  repoRoute("GET", "", getRepo),
  repoRoute("PATCH", "", editRepo),
  repoRoute("GET", "/collaborators/{collaborator}/permission", getPermission),
  repoRoute("PUT", "/collaborators/{collaborator}", putCollaborator),

  repoRoute("GET", "/issues", listIssues),
  repoRoute("POST", "/issues", createIssue),
  repoRoute("GET", "/issues/{index}", getIssue),
  repoRoute("PATCH", "/issues/{index}", editIssue),
  repoRoute("GET", "/issues/{index}/comments", listComments),
  repoRoute("POST", "/issues/{index}/comments", createComment),
  repoRoute("GET", "/issues/{index}/labels", getIssueLabels),
  repoRoute("POST", "/issues/{index}/labels", addIssueLabels),
  repoRoute("PUT", "/issues/{index}/labels", replaceIssueLabels),
  repoRoute("DELETE", "/issues/{index}/labels", clearIssueLabels),
  repoRoute("DELETE", "/issues/{index}/labels/{id}", removeIssueLabel),

  repoRoute("GET", "/labels", listLabels),
  repoRoute("POST", "/labels", createLabel),
  repoRoute("GET", "/labels/{id}", getLabel),
  repoRoute("PATCH", "/labels/{id}", editLabel),
  repoRoute("DELETE", "/labels/{id}", deleteLabel),

  repoRoute("GET", "/pulls", listPulls),
  repoRoute("POST", "/pulls", createPullRequest),
  repoRoute("GET", "/pulls/{index}", getPull),
  repoRoute("PATCH", "/pulls/{index}", editPull),
  repoRoute("GET", "/pulls/{index}.{diffType}", pullDiff),
  repoRoute("GET", "/pulls/{index}/files", pullFiles),
  repoRoute("GET", "/pulls/{index}/merge", isMerged),
  repoRoute("POST", "/pulls/{index}/merge", merge),
  // GitHub merges with PUT.
  repoRoute("PUT", "/pulls/{index}/merge", mergeGithub),
  repoRoute("POST", "/pulls/{index}/update", updateBranch),
  repoRoute("PUT", "/pulls/{index}/update-branch", updateBranchGithub),
  repoRoute("GET", "/pulls/{index}/reviews", listReviews),
  repoRoute("POST", "/pulls/{index}/reviews", submitReview),
  repoRoute("GET", "/pulls/{index}/reviews/{id}/comments", listReviewComments),
  repoRoute("POST", "/pulls/{index}/reviews/{id}/dismissals", dismissReview),

  repoRoute("GET", "/statuses/{sha}", listCommitStatuses),
  repoRoute("POST", "/statuses/{sha}", createCommitStatus),
  repoRoute("GET", "/commits/{ref}/status", combinedStatus),
  // A commit and its parents: Gitea's git data route, and GitHub's (matched after the longer routes above).
  repoRoute("GET", "/git/commits/{sha}", getCommit),
  // Before the branch itself: a branch name takes the rest of the path.
  repoRoute("GET", "/branches/{branch}/protection", getGithubProtection),
  repoRoute("PUT", "/branches/{branch}/protection", putGithubProtection),
  repoRoute("GET", "/branches/{branch}", getBranch),
  repoRoute("GET", "/contents", getContents),
  repoRoute("GET", "/contents/{path}", getContents),
  repoRoute("DELETE", "/branches/{branch}", deleteBranch),
  // GitHub deletes a branch as its ref.
  repoRoute("DELETE", "/git/refs/heads/{branch}", deleteBranch),

  // GitHub's checks, which Forgejo lacks: for GitHub projects pointed at the local forge.
  repoRoute("POST", "/check-runs", createCheckRun),
  repoRoute("PATCH", "/check-runs/{id}", updateCheckRun),
  repoRoute("POST", "/check-suites", createCheckSuite),
  repoRoute("GET", "/commits/{ref}/check-runs", listCheckRuns),
  repoRoute("GET", "/commits/{ref}/check-suites", listCheckSuites),
  repoRoute("GET", "/commits/{ref}", getCommit),
  repoRoute("GET", "/compare/{basehead}", compare),
  repoRoute("GET", "/actions/runs", listWorkflowRuns),
  repoRoute("POST", "/actions/runs/{run_id}/rerun-failed-jobs", rerunFailedJobs),

  repoRoute("GET", "/branch_protections", listProtections),
  repoRoute("POST", "/branch_protections", createProtection),
  repoRoute("GET", "/branch_protections/{name}", getProtection),
  repoRoute("PATCH", "/branch_protections/{name}", editProtection),
  repoRoute("DELETE", "/branch_protections/{name}", deleteProtection),

  repoRoute("GET", "/hooks", listHooks),
  repoRoute("POST", "/hooks", createHook),
  repoRoute("DELETE", "/hooks/{id}", deleteHook),
];

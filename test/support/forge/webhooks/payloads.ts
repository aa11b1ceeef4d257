import type { PushedCommit } from "../git/log.ts";
import { ZERO_SHA } from "../git/refs.ts";
import type { Render } from "../render.ts";
import type { Comment, Issue, Repo, User } from "../state.ts";

// Webhook bodies shaped like Gitea's structs (modules/structs/hook.go): IssuePayload, IssueCommentPayload,
// PullRequestPayload and PushPayload. Only `changes` is omitted when empty, as its `omitempty` tag says.

export type Changes = { title?: { from: string }; body?: { from: string } };

export type IssueAction = "opened" | "edited" | "closed" | "reopened" | "label_updated" | "label_cleared";
export type PullAction = IssueAction | "synchronized" | "reviewed";

export function issuePayload(
  render: Render,
  repo: Repo,
  issue: Issue,
  action: IssueAction,
  sender: User,
  changes?: Changes,
) {
  return {
    action,
    number: issue.index,
    ...(changes ? { changes } : {}),
    issue: render.issue(repo, issue),
    repository: render.repo(repo, "owner"),
    sender: render.user(sender),
    commit_id: "",
  };
}

export function pullPayload(
  render: Render,
  repo: Repo,
  issue: Issue,
  action: PullAction,
  sender: User,
  extra: { changes?: Changes; review?: { type: string; content: string } } = {},
) {
  return {
    action,
    number: issue.index,
    ...(extra.changes ? { changes: extra.changes } : {}),
    pull_request: render.pull(repo, issue, "owner"),
    requested_reviewer: null,
    repository: render.repo(repo, "owner"),
    sender: render.user(sender),
    commit_id: "",
    review: extra.review ?? null,
  };
}

export function commentPayload(render: Render, repo: Repo, issue: Issue, comment: Comment, sender: User) {
  return {
    action: "created",
    issue: render.issue(repo, issue),
    comment: render.comment(repo, issue, comment),
    repository: render.repo(repo, "owner"),
    sender: render.user(sender),
    is_pull: issue.pull !== null,
  };
}

export function pushPayload(
  render: Render,
  repo: Repo,
  push: { branch: string; before: string | null; after: string; commits: PushedCommit[] },
  pusher: User,
) {
  const before = push.before ?? ZERO_SHA;
  const commits = push.commits.map((commit) => payloadCommit(render, repo, commit));
  return {
    ref: `refs/heads/${push.branch}`,
    before,
    after: push.after,
    compare_url: push.before ? `${render.repoUrl(repo)}/compare/${before}...${push.after}` : "",
    commits,
    total_commits: commits.length,
    head_commit: commits[0] ?? null,
    repository: render.repo(repo, "owner"),
    pusher: render.user(pusher),
    sender: render.user(pusher),
  };
}

/** Gitea's PayloadCommit: a commit in a push payload, and a branch's head. */
export function payloadCommit(render: Render, repo: Repo, commit: PushedCommit) {
  return {
    id: commit.sha,
    message: commit.message,
    url: `${render.repoUrl(repo)}/commit/${commit.sha}`,
    author: { ...commit.author, username: "" },
    committer: { ...commit.committer, username: "" },
    verification: null,
    timestamp: commit.timestamp,
    added: commit.added,
    removed: commit.removed,
    modified: commit.modified,
  };
}

import { type AccessMode, accessMode, atLeast } from "./auth.ts";
import type { DiffFile } from "./git/log.ts";
import type { Comment, CommitStatus, Hook, Issue, Label, Repo, Review, User } from "./state.ts";
import type { Store } from "./store.ts";

// The Gitea API v1 shapes (swagger definitions User, Repository, Label, Issue, Comment, PullRequest,
// PullReview, CommitStatus, Hook), field for field where Conveyor or the fixtures show them; constant
// values stand in for features the local forge does not have (stars, milestones, assignees, …).

const ZERO_TIME = "0001-01-01T00:00:00Z";

export class Render {
  readonly #store: Store;
  /** Web root without a trailing slash. */
  readonly url: string;
  readonly apiUrl: string;

  constructor(store: Store, url: string) {
    this.#store = store;
    this.url = url;
    this.apiUrl = `${url}/api/v1`;
  }

  repoUrl(repo: Repo): string {
    return `${this.url}/${repo.owner}/${repo.name}`;
  }

  repoApiUrl(repo: Repo): string {
    return `${this.apiUrl}/repos/${repo.owner}/${repo.name}`;
  }

  cloneUrl(repo: Repo): string {
    return `${this.repoUrl(repo)}.git`;
  }

  issueUrl(repo: Repo, issue: Issue): string {
    return `${this.repoUrl(repo)}/${issue.pull ? "pulls" : "issues"}/${issue.index}`;
  }

  user(user: User) {
    return {
      id: user.id,
      login: user.login,
      login_name: "",
      full_name: user.fullName,
      email: user.email,
      avatar_url: `${this.url}/avatars/${user.id}`,
      language: "",
      is_admin: user.isAdmin,
      last_login: ZERO_TIME,
      created: user.createdAt,
      restricted: false,
      active: true,
      prohibit_login: false,
      location: "",
      website: "",
      description: "",
      visibility: "public",
      followers_count: 0,
      following_count: 0,
      starred_repos_count: 0,
      username: user.login,
    };
  }

  userById(id: number) {
    return this.user(this.#store.user(id));
  }

  repo(repo: Repo, mode: AccessMode) {
    const owner = this.#store.userByLogin(repo.owner);
    if (!owner) throw new Error(`local forge: owner ${repo.owner} of ${repo.name} is missing`);
    const open = repo.issues.filter((issue) => issue.state === "open");
    return {
      id: repo.id,
      owner: this.user(owner),
      name: repo.name,
      full_name: `${repo.owner}/${repo.name}`,
      description: repo.description,
      empty: Object.keys(repo.branches).length === 0,
      private: repo.private,
      fork: false,
      template: false,
      parent: null,
      mirror: false,
      size: 0,
      language: "",
      languages_url: `${this.repoApiUrl(repo)}/languages`,
      html_url: this.repoUrl(repo),
      url: this.repoApiUrl(repo),
      link: "",
      ssh_url: `git@${new URL(this.url).hostname}:${repo.owner}/${repo.name}.git`,
      clone_url: this.cloneUrl(repo),
      original_url: "",
      website: "",
      stars_count: 0,
      forks_count: 0,
      watchers_count: 0,
      open_issues_count: open.filter((issue) => !issue.pull).length,
      open_pr_counter: open.filter((issue) => issue.pull).length,
      release_counter: 0,
      default_branch: repo.defaultBranch,
      archived: false,
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      permissions: {
        admin: atLeast(mode, "admin"),
        push: atLeast(mode, "write"),
        pull: atLeast(mode, "read"),
      },
      has_issues: true,
      has_wiki: false,
      has_pull_requests: true,
      has_projects: false,
      ignore_whitespace_conflicts: false,
      allow_merge_commits: repo.mergeStyles.merge,
      allow_rebase: repo.mergeStyles.rebase,
      allow_rebase_explicit: false,
      allow_squash_merge: repo.mergeStyles.squash,
      default_merge_style: "merge",
      avatar_url: "",
      internal: false,
      mirror_interval: "",
      mirror_updated: ZERO_TIME,
      repo_transfer: null,
    };
  }

  label(repo: Repo, label: Label) {
    return {
      id: label.id,
      name: label.name,
      exclusive: false,
      color: label.color,
      description: label.description,
      url: `${this.repoApiUrl(repo)}/labels/${label.id}`,
    };
  }

  /** Sorted by name. */
  issueLabels(repo: Repo, issue: Issue) {
    return repo.labels
      .filter((label) => issue.labelIds.includes(label.id))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((label) => this.label(repo, label));
  }

  issue(repo: Repo, issue: Issue) {
    return {
      id: issue.id,
      url: `${this.repoApiUrl(repo)}/issues/${issue.index}`,
      html_url: this.issueUrl(repo, issue),
      number: issue.index,
      user: this.userById(issue.posterId),
      original_author: "",
      original_author_id: 0,
      title: issue.title,
      body: issue.body,
      ref: "",
      labels: this.issueLabels(repo, issue),
      milestone: null,
      assignee: null,
      assignees: null,
      state: issue.state,
      is_locked: false,
      comments: issue.comments.length,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: issue.closedAt,
      due_date: null,
      pull_request: issue.pull ? { merged: issue.pull.merged, merged_at: issue.pull.mergedAt } : null,
      repository: {
        id: repo.id,
        name: repo.name,
        owner: repo.owner,
        full_name: `${repo.owner}/${repo.name}`,
      },
    };
  }

  comment(repo: Repo, issue: Issue, comment: Comment) {
    const issueUrl = this.issueUrl(repo, issue);
    return {
      id: comment.id,
      html_url: `${issueUrl}#issuecomment-${comment.id}`,
      pull_request_url: issue.pull ? issueUrl : "",
      issue_url: issue.pull ? "" : issueUrl,
      user: this.userById(comment.posterId),
      original_author: "",
      original_author_id: 0,
      body: comment.body,
      assets: [],
      created_at: comment.createdAt,
      updated_at: comment.updatedAt,
    };
  }

  /** A pull request; `issue.pull` must be set. As on Gitea, `url` is the web page too. */
  pull(repo: Repo, issue: Issue, mode: AccessMode) {
    const pull = issue.pull;
    if (!pull) throw new Error(`local forge: #${issue.index} is not a pull request`);
    const repository = this.repo(repo, mode);
    const branch = (ref: string, sha: string) => ({
      label: ref,
      ref,
      sha,
      repo_id: repo.id,
      repo: repository,
    });
    const url = this.issueUrl(repo, issue);
    return {
      id: issue.id,
      url,
      number: issue.index,
      user: this.userById(issue.posterId),
      title: issue.title,
      body: issue.body,
      labels: this.issueLabels(repo, issue),
      milestone: null,
      assignee: null,
      assignees: null,
      requested_reviewers: null,
      state: issue.state,
      is_locked: false,
      comments: issue.comments.length,
      html_url: url,
      diff_url: `${url}.diff`,
      patch_url: `${url}.patch`,
      mergeable: pull.mergeable,
      merged: pull.merged,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      merged_by: pull.mergedById === null ? null : this.userById(pull.mergedById),
      allow_maintainer_edit: false,
      base: branch(pull.baseBranch, repo.branches[pull.baseBranch] ?? pull.mergeBase),
      head: branch(pull.headBranch, pull.headSha),
      merge_base: pull.mergeBase,
      due_date: null,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: issue.closedAt,
    };
  }

  review(repo: Repo, issue: Issue, review: Review) {
    const url = this.issueUrl(repo, issue);
    return {
      id: review.id,
      user: this.userById(review.reviewerId),
      team: null,
      state: review.state,
      body: review.body,
      commit_id: review.commitId,
      stale: review.commitId !== issue.pull?.headSha,
      // Gitea's: a review by someone with write access, which branch protection counts.
      official: atLeast(accessMode(this.#store.user(review.reviewerId), repo), "write"),
      dismissed: review.dismissed,
      comments_count: review.comments.length,
      submitted_at: review.submittedAt,
      html_url: `${url}#issuecomment-${review.id}`,
      pull_request_url: url,
    };
  }

  /** Gitea's PullReviewComment: `position` is the new file's line, `diff_hunk` the hunk cut at it. */
  reviewComment(repo: Repo, issue: Issue, review: Review, comment: Review["comments"][number]) {
    const url = this.issueUrl(repo, issue);
    return {
      id: comment.id,
      body: comment.body,
      user: this.userById(review.reviewerId),
      resolver: null,
      pull_request_review_id: review.id,
      path: comment.path,
      commit_id: review.commitId,
      original_commit_id: review.commitId,
      diff_hunk: comment.hunk,
      position: comment.line,
      original_position: 0,
      html_url: `${url}/files#issuecomment-${comment.id}`,
      pull_request_url: url,
      created_at: review.submittedAt,
      updated_at: review.submittedAt,
    };
  }

  status(repo: Repo, status: CommitStatus) {
    return {
      id: status.index,
      status: status.state,
      target_url: status.targetUrl,
      description: status.description,
      url: `${this.repoApiUrl(repo)}/statuses/${status.sha}`,
      context: status.context,
      creator: this.userById(status.creatorId),
      created_at: status.createdAt,
      updated_at: status.createdAt,
    };
  }

  /** Gitea ≥ 1.18's ChangedFile (`previous_filename` only for a rename). */
  changedFile(repo: Repo, head: string, file: DiffFile, status: string) {
    const path = file.path.split("/").map(encodeURIComponent).join("/");
    return {
      filename: file.path,
      ...(file.previousPath !== null && status === "renamed" && { previous_filename: file.previousPath }),
      status,
      additions: file.additions,
      deletions: file.deletions,
      changes: file.additions + file.deletions,
      html_url: `${this.repoUrl(repo)}/src/commit/${head}/${path}`,
      contents_url: `${this.repoApiUrl(repo)}/contents/${path}?ref=${head}`,
      raw_url: `${this.repoUrl(repo)}/raw/commit/${head}/${path}`,
    };
  }

  hook(hook: Hook) {
    return {
      id: hook.id,
      type: hook.type,
      branch_filter: "",
      config: { content_type: "json", url: hook.url, http_method: "post" },
      events: hook.events,
      authorization_header: "",
      active: hook.active,
      updated_at: hook.updatedAt,
      created_at: hook.createdAt,
    };
  }
}

/**
 * GitHub's shapes of what the local forge holds, for requests that say they are GitHub's client
 * (`X-GitHub-Api-Version`): simple-user, label, issue, issue-comment, and a pull request's two shapes, the
 * full `pull-request` of one and the shorter `pull-request-simple` of a list (no `merged`, `mergeable` and
 * the counts), a review and its comments on lines. Field for field as GitHub's OpenAPI description requires them (test/fixtures/forge-api/
 * github.json checks it); constant values stand in for what the stand-in does not have.
 */
import { protectionOf, protectionRefusal } from "./merge-rules.ts";
import type { Comment, Issue, Label, Pull, Repo, Review, ReviewState, User } from "./state.ts";
import type { Store } from "./store.ts";

export class GitHubRender {
  readonly #store: Store;
  readonly #url: string;

  constructor(store: Store, url: string) {
    this.#store = store;
    this.#url = url;
  }

  private api(repo: Repo): string {
    return `${this.#url}/api/v1/repos/${repo.owner}/${repo.name}`;
  }

  private web(repo: Repo): string {
    return `${this.#url}/${repo.owner}/${repo.name}`;
  }

  user(user: User) {
    const api = `${this.#url}/api/v1/users/${user.login}`;
    return {
      login: user.login,
      id: user.id,
      node_id: `U_${user.id}`,
      avatar_url: `${this.#url}/avatars/${user.id}`,
      gravatar_id: "",
      url: api,
      html_url: `${this.#url}/${user.login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: "User",
      site_admin: user.isAdmin,
    };
  }

  private userById(id: number) {
    return this.user(this.#store.user(id));
  }

  label(repo: Repo, label: Label) {
    return {
      id: label.id,
      node_id: `LA_${label.id}`,
      url: `${this.api(repo)}/labels/${encodeURIComponent(label.name)}`,
      name: label.name,
      description: label.description || null,
      color: label.color,
      default: false,
    };
  }

  private labels(repo: Repo, issue: Issue) {
    return repo.labels
      .filter((label) => issue.labelIds.includes(label.id))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((label) => this.label(repo, label));
  }

  issue(repo: Repo, issue: Issue) {
    const url = `${this.api(repo)}/issues/${issue.index}`;
    const html = `${this.web(repo)}/${issue.pull ? "pull" : "issues"}/${issue.index}`;
    return {
      id: issue.id,
      node_id: `I_${issue.id}`,
      url,
      repository_url: this.api(repo),
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: html,
      number: issue.index,
      state: issue.state,
      title: issue.title,
      body: issue.body || null,
      user: this.userById(issue.posterId),
      labels: this.labels(repo, issue),
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      comments: issue.comments.length,
      // Set only on a pull request's issue, as on GitHub.
      ...(issue.pull && {
        pull_request: {
          url: `${this.api(repo)}/pulls/${issue.index}`,
          html_url: html,
          diff_url: `${html}.diff`,
          patch_url: `${html}.patch`,
          merged_at: issue.pull.mergedAt,
        },
      }),
      closed_at: issue.closedAt,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      author_association: "NONE",
    };
  }

  comment(repo: Repo, issue: Issue, comment: Comment) {
    return {
      id: comment.id,
      node_id: `IC_${comment.id}`,
      url: `${this.api(repo)}/issues/comments/${comment.id}`,
      body: comment.body,
      html_url: `${this.web(repo)}/issues/${issue.index}#issuecomment-${comment.id}`,
      user: this.userById(comment.posterId),
      created_at: comment.createdAt,
      updated_at: comment.updatedAt,
      issue_url: `${this.api(repo)}/issues/${issue.index}`,
      author_association: "NONE",
    };
  }

  /** `pull-request-simple`: what GitHub lists (`GET /pulls`). */
  pullSimple(repo: Repo, issue: Issue & { pull: Pull }) {
    const { pull } = issue;
    const url = `${this.api(repo)}/pulls/${issue.index}`;
    const html = `${this.web(repo)}/pull/${issue.index}`;
    const issueUrl = `${this.api(repo)}/issues/${issue.index}`;
    const owner = this.#store.userByLogin(repo.owner);
    const branch = (ref: string, sha: string) => ({
      label: `${repo.owner}:${ref}`,
      ref,
      sha,
      repo: { id: repo.id, name: repo.name, full_name: `${repo.owner}/${repo.name}` },
      user: owner ? this.user(owner) : null,
    });
    return {
      url,
      id: issue.id,
      node_id: `PR_${issue.id}`,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issueUrl,
      commits_url: `${url}/commits`,
      review_comments_url: `${url}/comments`,
      review_comment_url: `${this.api(repo)}/pulls/comments{/number}`,
      comments_url: `${issueUrl}/comments`,
      statuses_url: `${this.api(repo)}/statuses/${pull.headSha}`,
      number: issue.index,
      state: issue.state,
      locked: false,
      title: issue.title,
      user: this.userById(issue.posterId),
      body: issue.body || null,
      labels: this.labels(repo, issue),
      milestone: null,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: issue.closedAt,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      head: branch(pull.headBranch, pull.headSha),
      base: branch(pull.baseBranch, repo.branches[pull.baseBranch] ?? pull.mergeBase),
      _links: Object.fromEntries(
        Object.entries({
          self: url,
          html,
          issue: issueUrl,
          comments: `${issueUrl}/comments`,
          review_comments: `${url}/comments`,
          review_comment: `${this.api(repo)}/pulls/comments{/number}`,
          commits: `${url}/commits`,
          statuses: `${this.api(repo)}/statuses/${pull.headSha}`,
        }).map(([rel, href]) => [rel, { href }]),
      ),
      author_association: "NONE",
      auto_merge: null,
      draft: false,
    };
  }

  /** `pull-request`: one pull request (`GET /pulls/{n}`, the answer to a create), with its merge state. */
  pull(repo: Repo, issue: Issue & { pull: Pull }, mergeable: boolean) {
    const { pull } = issue;
    const open = issue.state === "open";
    return {
      ...this.pullSimple(repo, issue),
      merged: pull.merged,
      mergeable: open ? mergeable : null,
      rebaseable: open ? mergeable : null,
      mergeable_state: open ? this.mergeableState(repo, issue, mergeable) : "unknown",
      merged_by: pull.mergedById === null ? null : this.userById(pull.mergedById),
      comments: issue.comments.length,
      review_comments: 0,
      maintainer_can_modify: false,
      commits: 1,
      additions: 0,
      deletions: 0,
      changed_files: 0,
    };
  }

  /**
   * GitHub's `mergeable_state`: `dirty` for a conflict; `behind` only where the base's protection requires an
   * up-to-date head (strict required status checks, with a context to require): elsewhere a head behind its
   * base reads as any other; `blocked` where the protection refuses the merge now; else `clean`.
   */
  private mergeableState(repo: Repo, issue: Issue & { pull: Pull }, mergeable: boolean): string {
    if (!mergeable) return "dirty";
    const rule = protectionOf(repo, issue.pull.baseBranch);
    const strict =
      rule?.blockOnOutdatedBranch && rule.enableStatusCheck && rule.statusCheckContexts.length > 0;
    if (strict && issue.pull.mergeBase !== repo.branches[issue.pull.baseBranch]) return "behind";
    return protectionRefusal(this.#store, repo, issue, "github") === null ? "clean" : "blocked";
  }

  /** `pull-request-review`: GitHub's words for the states; a dismissed review reads `DISMISSED`. */
  review(repo: Repo, issue: Issue, review: Review) {
    const html = `${this.web(repo)}/pull/${issue.index}#pullrequestreview-${review.id}`;
    const pull = `${this.api(repo)}/pulls/${issue.index}`;
    return {
      id: review.id,
      node_id: `PRR_${review.id}`,
      user: this.userById(review.reviewerId),
      body: review.body,
      state: review.dismissed ? "DISMISSED" : GITHUB_REVIEW_STATES[review.state],
      html_url: html,
      pull_request_url: pull,
      _links: { html: { href: html }, pull_request: { href: pull } },
      submitted_at: review.submittedAt,
      commit_id: review.commitId,
      author_association: "NONE",
    };
  }

  /** `review-comment`: `line` (and `position`, here the same) on the new file's side, with its diff hunk. */
  reviewComment(repo: Repo, issue: Issue, review: Review, comment: Review["comments"][number]) {
    const url = `${this.api(repo)}/pulls/comments/${comment.id}`;
    const html = `${this.web(repo)}/pull/${issue.index}#discussion_r${comment.id}`;
    const pull = `${this.api(repo)}/pulls/${issue.index}`;
    const line = comment.line || null;
    return {
      id: comment.id,
      node_id: `PRRC_${comment.id}`,
      url,
      pull_request_review_id: review.id,
      diff_hunk: comment.hunk,
      path: comment.path,
      position: line,
      original_position: comment.line,
      commit_id: review.commitId,
      original_commit_id: review.commitId,
      user: this.userById(review.reviewerId),
      body: comment.body,
      created_at: review.submittedAt,
      updated_at: review.submittedAt,
      html_url: html,
      pull_request_url: pull,
      author_association: "NONE",
      _links: { self: { href: url }, html: { href: html }, pull_request: { href: pull } },
      side: "RIGHT",
      ...(line !== null && { line, original_line: line }),
      subject_type: line === null ? "file" : "line",
    };
  }
}

const GITHUB_REVIEW_STATES: Record<ReviewState, string> = {
  APPROVED: "APPROVED",
  REQUEST_CHANGES: "CHANGES_REQUESTED",
  COMMENT: "COMMENTED",
  PENDING: "PENDING",
};

import { z } from "zod";
import { giteaMergeability, type Mergeability } from "../../domain/stay-current.ts";
import { hasStatus } from "./errors.ts";
import { ForgeHttp, type HttpRequest } from "./http.ts";
import { ensureRepoLabels, findLabel, type NormalizedLabel } from "./labels.ts";
import { giteaBranchProtection, giteaMergeMethods, giteaProtection, readOr } from "./merge-rules.ts";
import { type ForgeClientOptions, transportOptions } from "./options.ts";
import { encodeBranch, RepoClient } from "./repo-client.ts";
import {
  comment,
  giteaBranch,
  giteaCombinedStatus,
  giteaReviewComment,
  type PullMergeState,
} from "./schemas.ts";
import type {
  BranchProtection,
  CombinedStatus,
  IssueComment,
  MergeOptions,
  NewIssue,
  NewReview,
  NewWebhook,
  Plain,
  ReviewEvent,
} from "./types.ts";

// Gitea's default MAX_RESPONSE_ITEMS: asking for more is silently cut to it.
const PAGE_SIZE = 50;

const commentList = z.array(comment);

const REVIEW_EVENTS: Record<ReviewEvent, string> = {
  APPROVE: "APPROVED",
  REQUEST_CHANGES: "REQUEST_CHANGES",
  COMMENT: "COMMENT",
};

/** Gitea and Forgejo (API v1, `https://host/api/v1`). */
export class GiteaClient extends RepoClient {
  readonly forge: "gitea" | "forgejo";
  protected readonly issuesOnly = { type: "issues" };
  // Gitea's repository issue list has no sort; reconciliation orders the page itself.
  protected readonly byUpdate = {};
  // Newest created first is Gitea's only order.
  protected readonly byCreation = {};
  protected readonly branchHead = giteaBranch;
  protected readonly commitPath = "git/commits";
  protected readonly reviewComment = giteaReviewComment;
  protected mergeabilityOf(pull: PullMergeState): Mergeability {
    return giteaMergeability({
      // Gitea always sends a boolean; null would be another forge's answer.
      mergeable: pull.mergeable ?? false,
      mergeBase: pull.merge_base ?? null,
      baseSha: pull.base.sha ?? null,
      conflictedFiles: pull.conflicted_files ?? [],
    });
  }

  /** `POST /pulls/{n}/update` (merge style): 409 when the base does not merge into the head. */
  async updateBranch(number: number, _expectedHeadSha: string): Promise<"updated" | "conflict"> {
    try {
      await this.http.send({ method: "POST", path: `${this.repo}/pulls/${number}/update?style=merge` });
      return "updated";
    } catch (error) {
      if (hasStatus(error, 409)) return "conflict";
      throw error;
    }
  }

  /** Gitea's and Forgejo's APIs have no re-run of Actions jobs: nothing asks this of them (src/domain/ci-rerun.ts). */
  rerunFailedJobs(_suiteId: number): Promise<number> {
    return Promise.reject(new RangeError(`${this.forge} has no API to re-run Actions jobs`));
  }

  protected branchDeletePath(encodedBranch: string): string {
    return `${this.repo}/branches/${encodedBranch}`;
  }
  protected readonly mergeMethods = giteaMergeMethods;

  /** The branch names its rule; the rule itself (`branch_protections/{name}`) is read where admins may. */
  async getBranchProtection(
    branch: string,
    { branchOnly = false }: { branchOnly?: boolean } = {},
  ): Promise<BranchProtection | null> {
    const path = `${this.repo}/branches/${encodeBranch(branch)}`;
    const { rule, protection } = await this.http.json({ method: "GET", path }, giteaBranchProtection);
    if (!protection || !rule || branchOnly) return protection;
    const rulePath = `${this.repo}/branch_protections/${encodeURIComponent(rule)}`;
    return readOr(this.http, rulePath, giteaProtection, async () => protection);
  }
  // Gitea pages its whole file list (X-Total-Count); it names no cap.
  protected readonly maxListedFiles = Number.POSITIVE_INFINITY;

  constructor(options: ForgeClientOptions) {
    const http = new ForgeHttp(transportOptions(options, { authorization: `token ${options.token}` }));
    super(http, options.repo, { param: "limit", size: PAGE_SIZE });
    this.forge = options.forge === "forgejo" ? "forgejo" : "gitea";
  }

  /** Gitea's comment list has no pages: one answer holds them all. */
  override listComments(number: number): Promise<IssueComment[]> {
    return this.http.json({ method: "GET", path: `${this.repo}/issues/${number}/comments` }, commentList);
  }

  async addLabels(number: number, names: string[]): Promise<void> {
    if (names.length === 0) return;
    // API v1 as of Gitea 1.17 takes label ids only (later versions take names too).
    const labels = await this.labelIds(names);
    const path = `${this.repo}/issues/${number}/labels`;
    await this.http.send({ method: "POST", path, body: { labels }, idempotent: true });
  }

  async removeLabel(number: number, name: string): Promise<void> {
    const label = findLabel(await this.listRepoLabels(), name);
    if (!label) return;
    try {
      await this.http.send({ method: "DELETE", path: `${this.repo}/issues/${number}/labels/${label.id}` });
    } catch (error) {
      // A label not on the issue is already a 204; 422: the label was deleted meanwhile; 404: the issue is.
      if (!hasStatus(error, 404, 422)) throw error;
    }
  }

  getPullRequestDiff(number: number): Promise<string> {
    return this.http.text({ method: "GET", path: `${this.repo}/pulls/${number}.diff`, accept: "text/plain" });
  }

  getCombinedStatus(ref: string): Promise<CombinedStatus> {
    // Gitea computes the combined state over the returned page only.
    const path = `${this.repo}/commits/${encodeURIComponent(ref)}/status`;
    return this.http.json({ method: "GET", path, query: { limit: PAGE_SIZE } }, giteaCombinedStatus);
  }

  async createIssue(issue: NewIssue<Plain>): Promise<{ number: number }> {
    const labels = issue.labels.length > 0 ? await this.labelIds(issue.labels) : [];
    return this.createIssueWith({ title: issue.title, body: issue.body, labels });
  }

  protected mergeRequest(number: number, options: MergeOptions): HttpRequest {
    return {
      method: "POST",
      path: `${this.repo}/pulls/${number}/merge`,
      body: {
        Do: options.method,
        MergeTitleField: options.title,
        MergeMessageField: options.message,
        head_commit_id: options.sha,
      },
      // A second merge is answered "already merged", which mergePullRequest reports as such.
      idempotent: true,
    };
  }

  protected reviewBody(review: NewReview<Plain>): unknown {
    return {
      event: REVIEW_EVENTS[review.event],
      body: review.body,
      comments: review.comments?.map(({ path, line, body }) => ({ path, body, new_position: line })),
    };
  }

  protected labelBody(label: NormalizedLabel): unknown {
    return { name: label.name, color: `#${label.color}`, description: label.description };
  }

  protected webhookBody(hook: NewWebhook): unknown {
    return {
      // Forgejo has its own hook type (and still accepts "gitea"); Gitea knows only "gitea".
      type: this.forge,
      active: true,
      events: hook.events,
      config: { url: hook.url, content_type: "json", secret: hook.secret },
    };
  }

  private async labelIds(names: string[]): Promise<number[]> {
    return (await ensureRepoLabels(this.labelStore(), names)).map((label) => label.id);
  }
}

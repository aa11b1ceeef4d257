import type { z } from "zod";
import { githubMergeability, githubNeedsCompare, type Mergeability } from "../../domain/stay-current.ts";
import { hasStatus } from "./errors.ts";
import { ForgeHttp, type HttpRequest } from "./http.ts";
import type { NormalizedLabel } from "./labels.ts";
import { githubBranchProtection, githubMergeMethods, githubProtection, readOr } from "./merge-rules.ts";
import { type ForgeClientOptions, transportOptions } from "./options.ts";
import { encodeBranch, RepoClient } from "./repo-client.ts";
import {
  githubBranch,
  githubCheckRuns,
  githubCheckSuites,
  githubCombinedStatus,
  githubComparison,
  githubReviewComment,
  githubWorkflowRuns,
  type PullMergeState,
} from "./schemas.ts";
import type {
  BranchProtection,
  CiReport,
  CombinedStatus,
  MergeOptions,
  NewIssue,
  NewReview,
  NewWebhook,
  Plain,
} from "./types.ts";

const PAGE_SIZE = 100;
/** Workflow run conclusions with nothing to run again. */
const PASSED = new Set(["success", "neutral", "skipped"]);

/** GitHub and GitHub Enterprise Server (`https://api.github.com`, `https://host/api/v3`). */
export class GitHubClient extends RepoClient {
  readonly forge = "github";
  // GitHub's issue list has no such filter; pull requests are dropped after listing.
  protected readonly issuesOnly = {};
  protected readonly byUpdate = { sort: "updated", direction: "asc" };
  protected readonly byCreation = { sort: "created", direction: "desc" };
  protected readonly branchHead = githubBranch;
  protected readonly commitPath = "commits";
  protected readonly reviewComment = githubReviewComment;
  /**
   * GitHub says `behind` only where the base's protection requires an up-to-date head: elsewhere, one more
   * read (the compare API) tells whether the head contains the base branch's head.
   */
  protected async mergeabilityOf(pull: PullMergeState): Promise<Mergeability> {
    const state = pull.mergeable_state ?? null;
    const compare = githubNeedsCompare(pull.mergeable, state);
    const behindBy = compare ? await this.behindBy(pull.base.ref, pull.head.sha) : null;
    return githubMergeability(pull.mergeable, state, behindBy);
  }

  /** `GET /compare/{base}...{head}`: `behind_by`, the commits of the base branch's head `head` lacks. */
  private behindBy(base: string, head: string): Promise<number> {
    // One commit per page: only the counts are read (the changed files come with the first page regardless).
    const path = `${this.repo}/compare/${encodeBranch(base)}...${head}`;
    return this.http.json({ method: "GET", path, query: { per_page: 1 } }, githubComparison);
  }

  /** `PUT /pulls/{n}/update-branch` (202, asynchronous); 422 when it cannot (a conflict, or a moved head). */
  async updateBranch(number: number, expectedHeadSha: string): Promise<"updated" | "conflict"> {
    try {
      await this.http.send({
        method: "PUT",
        path: `${this.repo}/pulls/${number}/update-branch`,
        body: { expected_head_sha: expectedHeadSha },
      });
      return "updated";
    } catch (error) {
      if (hasStatus(error, 422)) return "conflict";
      throw error;
    }
  }

  protected branchDeletePath(encodedBranch: string): string {
    return `${this.repo}/git/refs/heads/${encodedBranch}`;
  }
  protected readonly mergeMethods = githubMergeMethods;

  /**
   * The branch first: whether it is protected, and its required checks (a conditional read anyone may make).
   * The rule (`…/protection`) needs admin rights; without them GitHub answers 404, and the branch's part
   * stands.
   */
  async getBranchProtection(
    branch: string,
    { branchOnly = false }: { branchOnly?: boolean } = {},
  ): Promise<BranchProtection | null> {
    const path = `${this.repo}/branches/${encodeBranch(branch)}`;
    const shown = await this.http.json({ method: "GET", path }, githubBranchProtection);
    if (!shown || branchOnly) return shown;
    return readOr(this.http, `${path}/protection`, githubProtection, async () => shown);
  }
  // "Responses include a maximum of 3000 files" (REST API, list pull request files).
  protected readonly maxListedFiles = 3000;

  constructor(options: ForgeClientOptions) {
    const http = new ForgeHttp(
      transportOptions(options, {
        authorization: `Bearer ${options.token}`,
        accept: "application/vnd.github+json",
        headers: { "X-GitHub-Api-Version": "2022-11-28" },
      }),
    );
    super(http, options.repo, { param: "per_page", size: PAGE_SIZE });
  }

  async addLabels(number: number, names: string[]): Promise<void> {
    if (names.length === 0) return;
    // GitHub creates labels it does not know yet.
    const path = `${this.repo}/issues/${number}/labels`;
    await this.http.send({ method: "POST", path, body: { labels: names }, idempotent: true });
  }

  async removeLabel(number: number, name: string): Promise<void> {
    try {
      const path = `${this.repo}/issues/${number}/labels/${encodeURIComponent(name)}`;
      await this.http.send({ method: "DELETE", path });
    } catch (error) {
      // "Label does not exist": the label is not on the issue, which is what was asked for.
      if (!hasStatus(error, 404)) throw error;
    }
  }

  // GitHub filters by `owner:branch` (the owner of the repository the head lives in) and base.
  protected override pullsFrom(branch: string, base: string): Record<string, string> {
    const owner = decodeURIComponent(this.repo.split("/")[2] ?? "");
    return { head: `${owner}:${branch}`, base };
  }

  getPullRequestDiff(number: number): Promise<string> {
    const path = `${this.repo}/pulls/${number}`;
    return this.http.text({ method: "GET", path, accept: "application/vnd.github.diff" });
  }

  getCombinedStatus(ref: string): Promise<CombinedStatus> {
    const path = `${this.repo}/commits/${encodeURIComponent(ref)}/status`;
    return this.http.json({ method: "GET", path, query: { per_page: PAGE_SIZE } }, githubCombinedStatus);
  }

  override async getCiReport(sha: string): Promise<CiReport> {
    const commit = `${this.repo}/commits/${encodeURIComponent(sha)}`;
    const [combined, checkRuns, checkSuites] = await Promise.all([
      this.getCombinedStatus(sha),
      this.counted(`${commit}/check-runs`, githubCheckRuns),
      this.counted(`${commit}/check-suites`, githubCheckSuites),
    ]);
    return { statuses: combined.statuses, checkRuns, checkSuites };
  }

  /**
   * The workflow runs of check suite `suiteId` (`GET /actions/runs?check_suite_id=`), each finished one that
   * did not pass running its failed and cancelled jobs again (`POST /actions/runs/{id}/rerun-failed-jobs`,
   * the token's `actions: write`); how many runs re-ran.
   */
  async rerunFailedJobs(suiteId: number): Promise<number> {
    const path = `${this.repo}/actions/runs`;
    const query = { check_suite_id: suiteId, per_page: PAGE_SIZE };
    const { workflow_runs: runs } = await this.http.json({ method: "GET", path, query }, githubWorkflowRuns);
    const failed = runs.filter((run) => run.status === "completed" && !PASSED.has(run.conclusion ?? ""));
    for (const run of failed) {
      await this.http.send({ method: "POST", path: `${path}/${run.id}/rerun-failed-jobs` });
    }
    return failed.length;
  }

  createIssue(issue: NewIssue<Plain>): Promise<{ number: number }> {
    return this.createIssueWith({ title: issue.title, body: issue.body, labels: issue.labels });
  }

  protected mergeRequest(number: number, options: MergeOptions): HttpRequest {
    return {
      method: "PUT",
      path: `${this.repo}/pulls/${number}/merge`,
      body: {
        merge_method: options.method,
        sha: options.sha,
        commit_title: options.title,
        commit_message: options.message,
      },
    };
  }

  protected reviewBody(review: NewReview<Plain>): unknown {
    return {
      event: review.event,
      body: review.body,
      comments: review.comments?.map(({ path, line, body }) => ({ path, line, side: "RIGHT", body })),
    };
  }

  protected labelBody(label: NormalizedLabel): unknown {
    return { name: label.name, color: label.color, description: label.description };
  }

  protected webhookBody(hook: NewWebhook): unknown {
    return {
      name: "web",
      active: true,
      events: hook.events,
      config: { url: hook.url, content_type: "json", secret: hook.secret, insecure_ssl: "0" },
    };
  }

  /** GitHub's check lists come wrapped with their total count: pages until all are in. */
  private async counted<T>(path: string, schema: z.ZodType<{ total: number; items: T[] }>): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; ; page++) {
      const query = { per_page: PAGE_SIZE, page };
      const got = await this.http.json({ method: "GET", path, query }, schema);
      items.push(...got.items);
      if (got.items.length === 0 || items.length >= got.total) return items;
    }
  }
}

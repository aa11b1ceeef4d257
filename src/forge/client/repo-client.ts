import { z } from "zod";
import type { Mergeability } from "../../domain/stay-current.ts";
import { fileIds, readDirectory } from "./contents.ts";
import { hasStatus } from "./errors.ts";
import type { ForgeHttp, HttpRequest } from "./http.ts";
import { ensureRepoLabels, type LabelStore, type NormalizedLabel, type RepoLabel } from "./labels.ts";
import { settleMerge } from "./merge.ts";
import { repoPath } from "./options.ts";
import { collectPages, hasNextPage, listByUpdate } from "./pagination.ts";
import {
  changedFile,
  comment,
  commitParents,
  issue,
  listedPullRequest,
  login,
  openPullRequest,
  type PullMergeState,
  permission,
  pullMergeState,
  pullRequest,
  repoLabel,
  review,
  updatedIssue,
  withId,
  withNumber,
} from "./schemas.ts";
import type {
  BranchProtection,
  CiReport,
  CombinedStatus,
  CreatedPullRequest,
  ForgeClient,
  ForgeKind,
  Issue,
  IssueComment,
  IssueState,
  LabelSpec,
  ListedPullRequest,
  MergeMethods,
  MergeOptions,
  MergeResult,
  NewIssue,
  NewPullRequest,
  NewReview,
  NewWebhook,
  OpenPage,
  OpenPullRequest,
  Permission,
  Plain,
  PullRequest,
  PullRequestFiles,
  PullRequestUpdate,
  PullReview,
  PullReviewComment,
  UpdatedListing,
} from "./types.ts";

/**
 * What Gitea/Forgejo and GitHub do alike: the same paths and bodies for issues, comments, pull requests and
 * permissions. Subclasses fill in where the two APIs part ways.
 */
export abstract class RepoClient implements ForgeClient<Plain> {
  abstract readonly forge: ForgeKind;
  protected readonly repo: string;
  protected readonly http: ForgeHttp;
  private readonly paging: { param: "limit" | "per_page"; size: number };

  // Fields, not parameter properties: Node runs this file by stripping types (the demo imports it).
  protected constructor(
    http: ForgeHttp,
    repo: string,
    paging: { param: "limit" | "per_page"; size: number },
  ) {
    this.http = http;
    this.repo = repoPath(repo);
    this.paging = paging;
  }

  abstract addLabels(number: number, names: string[]): Promise<void>;
  abstract removeLabel(number: number, name: string): Promise<void>;
  abstract getPullRequestDiff(number: number): Promise<string>;
  abstract getCombinedStatus(ref: string): Promise<CombinedStatus>;
  abstract createIssue(issue: NewIssue<Plain>): Promise<{ number: number }>;
  protected abstract mergeRequest(number: number, options: MergeOptions): HttpRequest;
  protected abstract reviewBody(review: NewReview<Plain>): unknown;
  protected abstract labelBody(label: NormalizedLabel): unknown;
  protected abstract webhookBody(hook: NewWebhook): unknown;
  /** How the forge sorts a listing by update time, oldest first, where it can. */
  protected abstract readonly byUpdate: Record<string, string>;
  /** How the forge sorts a listing newest opened first (both do by default; GitHub is told). */
  protected abstract readonly byCreation: Record<string, string>;
  /** Extra filters for listing issues without pull requests, where the forge has one. */
  protected abstract readonly issuesOnly: Record<string, string>;
  /** The forge's Branch object, read for its head commit. */
  protected abstract readonly branchHead: z.ZodType<string>;
  /** A review's comment as the forge sends it: the two name its line differently. */
  protected abstract readonly reviewComment: z.ZodType<PullReviewComment>;
  abstract updateBranch(number: number, expectedHeadSha: string): Promise<"updated" | "conflict">;
  abstract rerunFailedJobs(suiteId: number): Promise<number>;
  /** The pull request's standing; GitHub's may read the compare API too. */
  protected abstract mergeabilityOf(pull: PullMergeState): Mergeability | Promise<Mergeability>;
  /** Where a branch is deleted: GitHub deletes its ref, Gitea and Forgejo the branch. */
  protected abstract branchDeletePath(encodedBranch: string): string;
  /** The repository's `allow_*` merge settings, as the forge names them (./merge-rules.ts). */
  protected abstract readonly mergeMethods: z.ZodType<MergeMethods>;
  abstract getBranchProtection(
    branch: string,
    options?: { branchOnly?: boolean },
  ): Promise<BranchProtection | null>;

  /** Gitea and Forgejo have commit statuses only (Actions post statuses too); GitHub adds its checks. */
  async getCiReport(sha: string): Promise<CiReport> {
    return { statuses: (await this.getCombinedStatus(sha)).statuses, checkRuns: [], checkSuites: [] };
  }

  async getBranchHead(branch: string): Promise<string | null> {
    const path = `${this.repo}/branches/${encodeBranch(branch)}`;
    try {
      return await this.http.json({ method: "GET", path }, this.branchHead);
    } catch (error) {
      if (hasStatus(error, 404)) return null;
      throw error;
    }
  }

  getCommitParents(sha: string): Promise<string[]> {
    return this.http.json(
      { method: "GET", path: `${this.repo}/${this.commitPath}/${encodeURIComponent(sha)}` },
      commitParents,
    );
  }
  /** Where a single commit is read below the repository: GitHub `commits`, Gitea `git/commits`. */
  protected abstract readonly commitPath: string;

  readDirectory(dir: string, ref: string, maxFiles: number): Promise<Map<string, string>> {
    return readDirectory(this.http, this.repo, dir, ref, maxFiles);
  }

  fileIds(paths: readonly string[], ref: string): Promise<Map<string, string>> {
    return fileIds(this.http, this.repo, paths, ref);
  }

  async getMergeability(number: number): Promise<Mergeability> {
    const path = `${this.repo}/pulls/${number}`;
    return this.mergeabilityOf(await this.http.json({ method: "GET", path }, pullMergeState));
  }

  async deleteBranch(branch: string): Promise<void> {
    try {
      await this.http.send({ method: "DELETE", path: this.branchDeletePath(encodeBranch(branch)) });
    } catch (error) {
      // Gone already (a retry, the forge's own delete-on-merge): GitHub answers 422, Gitea 404.
      if (!hasStatus(error, 404, 422)) throw error;
    }
  }

  /** The most files the forge lists for one pull request; a list this long may have been cut. */
  protected abstract readonly maxListedFiles: number;

  getIssue(number: number): Promise<Issue> {
    return this.http.json({ method: "GET", path: `${this.repo}/issues/${number}` }, issue);
  }

  listComments(number: number): Promise<IssueComment[]> {
    return this.listAll(`${this.repo}/issues/${number}/comments`, {}, comment);
  }

  async listIssuesByLabel(label: string, state: IssueState | "all" = "open"): Promise<Issue[]> {
    const query = { state, labels: label, ...this.issuesOnly };
    const issues = await this.listAll(`${this.repo}/issues`, query, issue);
    // Gitea drops an unknown label from the filter and then lists every issue; never trust the filter alone.
    const wanted = label.toLowerCase();
    return issues.filter(
      (item) => !item.isPullRequest && item.labels.some((name) => name.toLowerCase() === wanted),
    );
  }

  /**
   * Issues and pull requests updated at or after `since`. Where the forge sorts by update (GitHub), paged by
   * key (`listByUpdate`); otherwise (Gitea and Forgejo list newest-created first) by offset, where an item
   * opened mid-listing lands on a page already read: the cursor's bound on the forge's clock covers it.
   */
  async listUpdatedSince(since: string | null): Promise<UpdatedListing> {
    const query = (from: string | null) => ({
      state: "all",
      ...this.byUpdate,
      ...(from !== null && { since: from }),
    });
    if (Object.keys(this.byUpdate).length === 0) {
      let forgeTime: number | null = null;
      const items = await this.listAll(`${this.repo}/issues`, query(since), updatedIssue, (headers, page) => {
        if (page === 1) forgeTime = dateOf(headers);
      });
      return { items, forgeTime, heldAt: null };
    }
    return listByUpdate(since, (from, page) => this.issuePage(query(from), page));
  }

  async listOpenPage(page: number): Promise<OpenPage> {
    const { items, more, date } = await this.issuePage({ state: "open", ...this.byCreation }, page);
    return { items, more, forgeTime: date };
  }

  /** One page of the repository's issue listing (pull requests included) under `query`. */
  private async issuePage(query: Record<string, string>, page: number) {
    const { param, size } = this.paging;
    const request: HttpRequest = {
      method: "GET",
      path: `${this.repo}/issues`,
      query: { ...query, [param]: size, page },
    };
    const { data, headers } = await this.http.page(request, z.array(updatedIssue));
    const more = hasNextPage(data.length, (page - 1) * size + data.length, size, headers);
    return { items: data, more, date: dateOf(headers) };
  }

  async comment(number: number, body: string): Promise<{ id: number }> {
    const created = await this.http.json(
      { method: "POST", path: `${this.repo}/issues/${number}/comments`, body: { body } },
      withId,
    );
    return { id: created.id };
  }

  async createPullRequest(pull: NewPullRequest<Plain>): Promise<CreatedPullRequest> {
    const { head, base, title, body } = pull;
    // A repeated create is refused (one pull request per head and base), so retrying cannot duplicate it.
    const request: HttpRequest = {
      method: "POST",
      path: `${this.repo}/pulls`,
      body: { head, base, title, body },
      idempotent: true,
    };
    const created = await this.http.json(request, pullRequest);
    return { number: created.number, url: created.url, headSha: created.headSha };
  }

  async updatePullRequest(number: number, update: PullRequestUpdate<Plain>): Promise<void> {
    const { title, body, state } = update;
    await this.http.send({
      method: "PATCH",
      path: `${this.repo}/pulls/${number}`,
      body: { title, body, state },
    });
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    const { url: _url, ...pull } = await this.http.json(
      { method: "GET", path: `${this.repo}/pulls/${number}` },
      pullRequest,
    );
    return pull;
  }

  async findOpenPullRequest(branch: string, base: string): Promise<ListedPullRequest | null> {
    const query = { state: "open", ...this.pullsFrom(branch, base) };
    // A list's shape, not an item's: GitHub lists pull requests without their merge state.
    const pulls = await this.listAll(`${this.repo}/pulls`, query, listedPullRequest);
    // The filter narrows where the forge has one; the match is always checked here. Same-repository heads
    // only: a fork's branch of the same name is not Conveyor's.
    return pulls.find((pull) => pull.headRef === branch && pull.baseRef === base) ?? null;
  }

  listOpenPullRequests(): Promise<OpenPullRequest[]> {
    return this.listAll(`${this.repo}/pulls`, { state: "open" }, openPullRequest);
  }

  /** The list query that narrows open pull requests to one head and base, where the forge has one. */
  protected pullsFrom(_branch: string, _base: string): Record<string, string> {
    return {};
  }

  async listPullRequestFiles(number: number): Promise<PullRequestFiles> {
    const files = await this.listAll(`${this.repo}/pulls/${number}/files`, {}, changedFile);
    return { files, complete: files.length < this.maxListedFiles };
  }

  mergePullRequest(number: number, options: MergeOptions): Promise<MergeResult> {
    return settleMerge(
      () => this.http.send(this.mergeRequest(number, options)),
      () => this.getPullRequest(number),
    );
  }

  getMergeMethods(): Promise<MergeMethods> {
    return this.http.json({ method: "GET", path: this.repo }, this.mergeMethods);
  }

  async closeIssue(number: number): Promise<void> {
    await this.http.send({
      method: "PATCH",
      path: `${this.repo}/issues/${number}`,
      body: { state: "closed" },
    });
  }

  async editIssueBody(number: number, body: string): Promise<void> {
    await this.http.send({ method: "PATCH", path: `${this.repo}/issues/${number}`, body: { body } });
  }

  async getPermission(username: string): Promise<Permission> {
    const path = `${this.repo}/collaborators/${encodeURIComponent(username)}/permission`;
    try {
      return await this.http.json({ method: "GET", path }, permission);
    } catch (error) {
      if (hasStatus(error, 404)) return "none";
      throw error;
    }
  }

  async getAuthenticatedUser(): Promise<string> {
    return (await this.http.json({ method: "GET", path: "/user" }, login)).login;
  }

  async createReview(number: number, review: NewReview<Plain>): Promise<{ id: number }> {
    const path = `${this.repo}/pulls/${number}/reviews`;
    const created = await this.http.json({ method: "POST", path, body: this.reviewBody(review) }, withId);
    return { id: created.id };
  }

  listReviews(number: number): Promise<PullReview[]> {
    return this.listAll(`${this.repo}/pulls/${number}/reviews`, {}, review);
  }

  listReviewComments(number: number, reviewId: number): Promise<PullReviewComment[]> {
    const path = `${this.repo}/pulls/${number}/reviews/${reviewId}/comments`;
    return this.listAll(path, {}, this.reviewComment);
  }

  async ensureLabels(labels: ReadonlyArray<string | LabelSpec>): Promise<void> {
    await ensureRepoLabels(this.labelStore(), labels);
  }

  async createWebhook(hook: NewWebhook): Promise<{ id: number }> {
    const created = await this.http.json(
      { method: "POST", path: `${this.repo}/hooks`, body: this.webhookBody(hook) },
      withId,
    );
    return { id: created.id };
  }

  protected async createIssueWith(body: unknown): Promise<{ number: number }> {
    const created = await this.http.json({ method: "POST", path: `${this.repo}/issues`, body }, withNumber);
    return { number: created.number };
  }

  protected labelStore(): LabelStore {
    return {
      list: () => this.listRepoLabels(),
      create: (label) =>
        this.http.json(
          // A repeated create is refused as a duplicate, which ensureRepoLabels settles.
          { method: "POST", path: `${this.repo}/labels`, body: this.labelBody(label), idempotent: true },
          repoLabel,
        ),
    };
  }

  protected listRepoLabels(): Promise<RepoLabel[]> {
    return this.listAll(`${this.repo}/labels`, {}, repoLabel);
  }

  /** Every page of a list endpoint. */
  /** `onPage` sees each page's response headers. */
  protected listAll<S extends z.ZodType>(
    path: string,
    query: Record<string, string>,
    item: S,
    onPage?: (headers: Headers, page: number) => void,
  ): Promise<z.output<S>[]> {
    const { param, size } = this.paging;
    const list = z.array(item);
    return collectPages(size, async (page) => {
      const request: HttpRequest = { method: "GET", path, query: { ...query, [param]: size, page } };
      const { data, headers } = await this.http.page(request, list);
      onPage?.(headers, page);
      return { items: data, headers };
    });
  }
}

/** The forge's clock when it answered (its `Date`), or null. */
function dateOf(headers: Headers): number | null {
  const date = Date.parse(headers.get("date") ?? "");
  return Number.isNaN(date) ? null : date;
}

/** Both forges take a branch's slashes as they are (`branches/conveyor/7`). */
export const encodeBranch = (branch: string) => branch.split("/").map(encodeURIComponent).join("/");

/**
 * The repository's merge settings and branch protection, as each forge's API has them. Gitea and Forgejo:
 * `PATCH /repos/{o}/{r}` (`allow_merge_commits`, `allow_squash_merge`, `allow_rebase`) and
 * `/branch_protections[/{name}]` (repository admins only). GitHub: `PATCH /repos/{o}/{r}` (`allow_merge_commit`,
 * `allow_squash_merge`, `allow_rebase_merge`) and `GET/PUT /branches/{branch}/protection` (admins; to others,
 * and for a branch without protection, a 404). Enforced at the merge by ../merge-rules.ts.
 */
import { z } from "zod";
import { atLeast } from "../auth.ts";
import { ApiError, json, notFound, parseBody, type Reply } from "../http.ts";
import { protectionOf } from "../merge-rules.ts";
import type { Protection, Repo } from "../state.ts";
import type { Store } from "../store.ts";
import { getBranch } from "./branches.ts";
import { type RepoContext, requireMode } from "./context.ts";

const flag = z.boolean().optional();

const giteaRepoEdit = z.object({
  allow_merge_commits: flag,
  allow_squash_merge: flag,
  allow_rebase: flag,
});
const githubRepoEdit = z.object({
  allow_merge_commit: flag,
  allow_squash_merge: flag,
  allow_rebase_merge: flag,
});

/** `PATCH /repos/{o}/{r}`: the merge settings only (anything else in the body is left as it is). */
export function editRepo(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const styles = ctx.repo.mergeStyles;
  if (ctx.dialect === "github") {
    const edit = parseBody(githubRepoEdit, ctx.body);
    styles.merge = edit.allow_merge_commit ?? styles.merge;
    styles.squash = edit.allow_squash_merge ?? styles.squash;
    styles.rebase = edit.allow_rebase_merge ?? styles.rebase;
  } else {
    const edit = parseBody(giteaRepoEdit, ctx.body);
    styles.merge = edit.allow_merge_commits ?? styles.merge;
    styles.squash = edit.allow_squash_merge ?? styles.squash;
    styles.rebase = edit.allow_rebase ?? styles.rebase;
  }
  ctx.forge.store.save();
  return json(200, ctx.forge.render.repo(ctx.repo, ctx.mode));
}

const giteaRule = z.object({
  rule_name: z.string().min(1).optional(),
  /** Deprecated by Gitea for `rule_name`, still taken. */
  branch_name: z.string().min(1).optional(),
  required_approvals: z.number().int().min(0).optional(),
  enable_status_check: flag,
  status_check_contexts: z.array(z.string()).optional(),
  block_on_outdated_branch: flag,
  block_on_rejected_reviews: flag,
  dismiss_stale_approvals: flag,
});

export function listProtections(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  return json(200, ctx.repo.protections.map(giteaProtection));
}

export function createProtection(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const input = parseBody(giteaRule, ctx.body);
  const name = input.rule_name ?? input.branch_name;
  if (!name) throw new ApiError(422, "[RuleName]: Required");
  if (ctx.repo.protections.some((rule) => rule.ruleName === name))
    throw new ApiError(403, "Branch protection already exist");
  const rule = newRule(ctx.forge.store, name);
  applyGitea(rule, input);
  ctx.repo.protections.push(rule);
  ctx.forge.store.save();
  return json(201, giteaProtection(rule));
}

export function getProtection(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  return json(200, giteaProtection(ruleParam(ctx)));
}

export function editProtection(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const rule = ruleParam(ctx);
  applyGitea(rule, parseBody(giteaRule, ctx.body));
  rule.updatedAt = ctx.forge.store.now();
  ctx.forge.store.save();
  return json(200, giteaProtection(rule));
}

export function deleteProtection(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const rule = ruleParam(ctx);
  ctx.repo.protections = ctx.repo.protections.filter((other) => other !== rule);
  ctx.forge.store.save();
  return { status: 204 };
}

function ruleParam(ctx: RepoContext): Protection {
  const rule = ctx.repo.protections.find((candidate) => candidate.ruleName === ctx.params.name);
  if (!rule) throw notFound();
  return rule;
}

function newRule(store: Store, ruleName: string): Protection {
  const now = store.now();
  return {
    id: store.nextId(),
    ruleName,
    requiredApprovals: 0,
    enableStatusCheck: false,
    statusCheckContexts: [],
    blockOnOutdatedBranch: false,
    blockOnRejectedReviews: false,
    dismissStaleApprovals: false,
    requireCodeOwnerReviews: false,
    createdAt: now,
    updatedAt: now,
  };
}

function applyGitea(rule: Protection, input: z.infer<typeof giteaRule>): void {
  rule.requiredApprovals = input.required_approvals ?? rule.requiredApprovals;
  rule.enableStatusCheck = input.enable_status_check ?? rule.enableStatusCheck;
  rule.statusCheckContexts = input.status_check_contexts ?? rule.statusCheckContexts;
  rule.blockOnOutdatedBranch = input.block_on_outdated_branch ?? rule.blockOnOutdatedBranch;
  rule.blockOnRejectedReviews = input.block_on_rejected_reviews ?? rule.blockOnRejectedReviews;
  rule.dismissStaleApprovals = input.dismiss_stale_approvals ?? rule.dismissStaleApprovals;
}

/** Gitea's BranchProtection. */
function giteaProtection(rule: Protection) {
  return {
    branch_name: rule.ruleName,
    rule_name: rule.ruleName,
    enable_push: false,
    enable_push_whitelist: false,
    push_whitelist_usernames: [],
    push_whitelist_teams: [],
    push_whitelist_deploy_keys: false,
    enable_merge_whitelist: false,
    merge_whitelist_usernames: [],
    merge_whitelist_teams: [],
    enable_status_check: rule.enableStatusCheck,
    status_check_contexts: rule.statusCheckContexts,
    required_approvals: rule.requiredApprovals,
    enable_approvals_whitelist: false,
    approvals_whitelist_username: [],
    approvals_whitelist_teams: [],
    block_on_rejected_reviews: rule.blockOnRejectedReviews,
    block_on_official_review_requests: false,
    block_on_outdated_branch: rule.blockOnOutdatedBranch,
    dismiss_stale_approvals: rule.dismissStaleApprovals,
    ignore_stale_approvals: false,
    require_signed_commits: false,
    protected_file_patterns: "",
    unprotected_file_patterns: "",
    created_at: rule.createdAt,
    updated_at: rule.updatedAt,
  };
}

/** What Gitea's Branch says of its protection, to anyone who may read the repository. */
export function giteaBranchFields(ctx: RepoContext, branch: string) {
  const rule = protectionOf(ctx.repo, branch);
  const writer = atLeast(ctx.mode, "write");
  return {
    protected: rule !== undefined,
    required_approvals: rule?.requiredApprovals ?? 0,
    enable_status_check: rule?.enableStatusCheck ?? false,
    status_check_contexts: rule?.statusCheckContexts ?? [],
    user_can_push: writer && rule === undefined,
    user_can_merge: writer,
    effective_branch_protection_name: rule?.ruleName ?? "",
  };
}

const githubRule = z.object({
  required_status_checks: z
    .object({ strict: z.boolean().optional(), contexts: z.array(z.string()).optional() })
    .nullable(),
  enforce_admins: z.boolean().nullable(),
  required_pull_request_reviews: z
    .object({
      required_approving_review_count: z.number().int().min(0).max(6).optional(),
      require_code_owner_reviews: flag,
      dismiss_stale_reviews: flag,
    })
    .nullable(),
  restrictions: z.unknown(),
});

/** GitHub's `GET /branches/{branch}/protection`: admins only, and a 404 for a branch without any. */
export function getGithubProtection(ctx: RepoContext): Promise<Reply> | Reply {
  // Gitea has no such path: to it, this is a branch whose name ends in /protection.
  if (ctx.dialect !== "github")
    return getBranch({ ...ctx, params: { ...ctx.params, branch: `${ctx.params.branch}/protection` } });
  if (!atLeast(ctx.mode, "admin")) throw new ApiError(404, "Not Found");
  const rule = protectionOf(ctx.repo, ctx.params.branch ?? "");
  if (!rule) throw new ApiError(404, "Branch not protected");
  return json(200, githubProtection(ctx, rule));
}

/** GitHub's `PUT /branches/{branch}/protection`: the whole rule, replaced. */
export function putGithubProtection(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const branch = ctx.params.branch ?? "";
  if (!ctx.repo.branches[branch]) throw new ApiError(404, "Branch not found");
  const input = parseBody(githubRule, ctx.body);
  const existing = protectionOf(ctx.repo, branch);
  const rule = existing ?? newRule(ctx.forge.store, branch);
  const checks = input.required_status_checks;
  const reviews = input.required_pull_request_reviews;
  Object.assign(rule, {
    enableStatusCheck: checks !== null,
    statusCheckContexts: checks?.contexts ?? [],
    blockOnOutdatedBranch: checks?.strict ?? false,
    requiredApprovals: reviews ? (reviews.required_approving_review_count ?? 1) : 0,
    requireCodeOwnerReviews: reviews?.require_code_owner_reviews ?? false,
    dismissStaleApprovals: reviews?.dismiss_stale_reviews ?? false,
    updatedAt: ctx.forge.store.now(),
  });
  if (!existing) ctx.repo.protections.push(rule);
  ctx.forge.store.save();
  return json(200, githubProtection(ctx, rule));
}

/** GitHub's branch-protection. Admins are held to it too here (`enforce_admins` on). */
function githubProtection(ctx: RepoContext, rule: Protection) {
  const url = `${ctx.forge.render.repoApiUrl(ctx.repo)}/branches/${rule.ruleName}/protection`;
  return {
    url,
    enabled: true,
    ...(rule.enableStatusCheck && {
      required_status_checks: {
        url: `${url}/required_status_checks`,
        strict: rule.blockOnOutdatedBranch,
        contexts: rule.statusCheckContexts,
        checks: rule.statusCheckContexts.map((context) => ({ context, app_id: null })),
        contexts_url: `${url}/required_status_checks/contexts`,
      },
    }),
    ...((rule.requiredApprovals > 0 || rule.requireCodeOwnerReviews) && {
      required_pull_request_reviews: {
        url: `${url}/required_pull_request_reviews`,
        dismiss_stale_reviews: rule.dismissStaleApprovals,
        require_code_owner_reviews: rule.requireCodeOwnerReviews,
        required_approving_review_count: rule.requiredApprovals,
      },
    }),
    enforce_admins: { url: `${url}/enforce_admins`, enabled: true },
    name: rule.ruleName,
    protection_url: url,
  };
}

/** What GitHub's branch-with-protection says of its protection, to anyone who may read the repository. */
export function githubBranchFields(ctx: RepoContext, branch: string) {
  const rule = protectionOf(ctx.repo, branch);
  const contexts = rule?.enableStatusCheck ? rule.statusCheckContexts : [];
  return {
    protected: rule !== undefined,
    protection: {
      enabled: rule !== undefined,
      required_status_checks: {
        enforcement_level: rule?.enableStatusCheck ? "everyone" : "off",
        contexts,
        checks: contexts.map((context) => ({ context, app_id: null })),
      },
    },
    protection_url: `${ctx.forge.render.repoApiUrl(ctx.repo)}/branches/${branch}/protection`,
  };
}

/** GitHub's `allow_*` fields of its repository, beside Gitea's, for a GitHub client. */
export const githubMergeSettings = (repo: Repo) => ({
  allow_merge_commit: repo.mergeStyles.merge,
  allow_squash_merge: repo.mergeStyles.squash,
  allow_rebase_merge: repo.mergeStyles.rebase,
});

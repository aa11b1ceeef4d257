/**
 * The repository's merge rules as each forge's API gives them: the merge methods it allows and the branch
 * protection of the base. Both forges show the rule itself to repository admins only; a reader gets the
 * branch, which shows part of it (GitHub: its required checks; Gitea and Forgejo: approvals and checks).
 */
import { z } from "zod";
import { hasStatus } from "./errors.ts";
import type { ForgeHttp } from "./http.ts";
import type { BranchProtection, MergeMethods } from "./types.ts";

const flag = z.boolean().nullish();

/** GitHub's full-repository: the `allow_*` fields are there for a token that may push. */
export const githubMergeMethods = z
  .object({ allow_merge_commit: flag, allow_squash_merge: flag, allow_rebase_merge: flag })
  .transform(({ allow_merge_commit: merge, allow_squash_merge: squash, allow_rebase_merge: rebase }) =>
    merge == null || squash == null || rebase == null ? null : { merge, squash, rebase },
  );

/** Gitea's Repository; `Do: rebase` is its `allow_rebase` (rebase and fast-forward). */
export const giteaMergeMethods = z
  .object({ allow_merge_commits: flag, allow_squash_merge: flag, allow_rebase: flag })
  .transform(({ allow_merge_commits: merge, allow_squash_merge: squash, allow_rebase: rebase }) =>
    merge == null || squash == null || rebase == null ? null : { merge, squash, rebase },
  );

const names = z.array(z.string()).nullish();

/** GitHub's `GET /branches/{branch}/protection` (admin): the whole rule. */
export const githubProtection = z
  .object({
    required_status_checks: z
      .object({
        strict: flag,
        contexts: names,
        checks: z.array(z.object({ context: z.string() })).nullish(),
      })
      .nullish(),
    required_pull_request_reviews: z
      .object({
        required_approving_review_count: z.number().int().nullish(),
        require_code_owner_reviews: flag,
        dismiss_stale_reviews: flag,
      })
      .nullish(),
  })
  .transform((raw): BranchProtection => {
    const checks = raw.required_status_checks;
    const reviews = raw.required_pull_request_reviews;
    return {
      // Required reviews switched on count one approval at least (GitHub's own default).
      requiredApprovals: reviews ? (reviews.required_approving_review_count ?? 1) : 0,
      requiredChecks: unique([...(checks?.contexts ?? []), ...(checks?.checks ?? []).map((c) => c.context)]),
      upToDate: checks?.strict ?? false,
      codeOwnerReview: reviews?.require_code_owner_reviews ?? false,
      dismissStale: reviews?.dismiss_stale_reviews ?? false,
    };
  });

/** GitHub's branch-with-protection, read by anyone: whether it is protected, and its required checks. */
export const githubBranchProtection = z
  .object({
    protected: z.boolean(),
    protection: z.object({ required_status_checks: z.object({ contexts: names }).nullish() }).nullish(),
  })
  .transform((raw): BranchProtection | null =>
    raw.protected
      ? {
          requiredApprovals: null,
          requiredChecks: unique(raw.protection?.required_status_checks?.contexts ?? []),
          upToDate: null,
          codeOwnerReview: false,
          dismissStale: false,
        }
      : null,
  );

/** Gitea's Branch, read by anyone: the rule's approvals and checks, and the rule's name. */
export const giteaBranchProtection = z
  .object({
    protected: z.boolean(),
    required_approvals: z.number().int().nullish(),
    enable_status_check: flag,
    status_check_contexts: names,
    effective_branch_protection_name: z.string().nullish(),
  })
  .transform((raw) => ({
    rule: raw.effective_branch_protection_name ?? "",
    protection: raw.protected
      ? ({
          requiredApprovals: raw.required_approvals ?? 0,
          requiredChecks: raw.enable_status_check ? unique(raw.status_check_contexts ?? []) : [],
          upToDate: null,
          codeOwnerReview: false,
          dismissStale: false,
        } satisfies BranchProtection)
      : null,
  }));

/** Gitea's BranchProtection (`GET /branch_protections/{name}`, admin): the whole rule. */
export const giteaProtection = z
  .object({
    required_approvals: z.number().int().nullish(),
    enable_status_check: flag,
    status_check_contexts: names,
    block_on_outdated_branch: flag,
    block_on_official_review_requests: flag,
    dismiss_stale_approvals: flag,
    // Gitea ≥ 1.21: stale approvals stay but no longer count.
    ignore_stale_approvals: flag,
  })
  .transform(
    (raw): BranchProtection => ({
      requiredApprovals: raw.required_approvals ?? 0,
      requiredChecks: raw.enable_status_check ? unique(raw.status_check_contexts ?? []) : [],
      upToDate: raw.block_on_outdated_branch ?? false,
      codeOwnerReview: raw.block_on_official_review_requests ?? false,
      dismissStale: (raw.dismiss_stale_approvals ?? false) || (raw.ignore_stale_approvals ?? false),
    }),
  );

const unique = (items: string[]) => [...new Set(items)];

/** The answer of `path`, or `fallback` for the statuses a reader gets where an admin gets the answer. */
export async function readOr<T, F>(
  http: ForgeHttp,
  path: string,
  schema: z.ZodType<T>,
  fallback: () => Promise<F>,
): Promise<T | F> {
  try {
    return await http.json({ method: "GET", path }, schema);
  } catch (error) {
    if (hasStatus(error, 403, 404)) return fallback();
    throw error;
  }
}

export type { BranchProtection, MergeMethods };

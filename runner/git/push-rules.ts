/**
 * What the runner may push. It holds one issue per job and writes one ref for it, `conveyor/<n>`, nothing
 * else: a job naming another branch (a forged or mistaken job) is refused before git runs. A push that is
 * not a fast-forward (a session that rebased or rewrote its branch) is forced only with a lease on the sha
 * the Worker last recorded for the branch, so that work pushed since by anyone else is never overwritten.
 */
import { issueBranch } from "../../src/domain/branch.ts";

export type PushRequest = {
  /** The issue the job holds. */
  issueNumber: number;
  /** The branch the job names. */
  branch: string;
  /** The head the Worker last recorded for the branch; null when it has recorded none. */
  lease: string | null;
};

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/** Why the push may not run at all, or null when it may. */
export function pushRefusal({ issueNumber, branch, lease }: PushRequest): string | null {
  if (!Number.isSafeInteger(issueNumber) || issueNumber < 1) return `bad issue number: ${issueNumber}`;
  const held = issueBranch(issueNumber);
  if (branch !== held) return `the job holds ${held}; it may not push ${JSON.stringify(branch)}`;
  if (lease !== null && !SHA.test(lease)) return `the lease ${JSON.stringify(lease)} is not a full sha`;
  return null;
}

/**
 * The `git push` arguments after `push --quiet <remote>`: a plain push, or a forced one under the lease. Never
 * a `+` refspec: it forces the update whatever the lease says.
 */
export function pushArgs(sha: string, branch: string, lease: string | null): string[] {
  const ref = `refs/heads/${branch}`;
  return lease === null ? [`${sha}:${ref}`] : [`--force-with-lease=${ref}:${lease}`, `${sha}:${ref}`];
}

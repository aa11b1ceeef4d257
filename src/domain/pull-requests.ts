/**
 * Which pull request speaks for an issue. Anyone can open a pull request from a fork, name its branch
 * `conveyor/<n>` or write "Fixes #n" in it; none of that may re-point, close or merge issue n. Only the
 * issue's recorded pull request counts, and before one is recorded only Conveyor's own (see lifecycle.ts);
 * closing keywords never link a pull request to an issue.
 */
import { sameLogin } from "./logins.ts";

// Issue numbers are capped at 9 digits so they always fit a safe integer.
// Conveyor names its branches `conveyor/<issue>` or `conveyor/<issue>-<slug>`.
const BRANCH = /^conveyor\/([1-9]\d{0,8})(?:-.*)?$/;

/** The issue a `conveyor/<n>[-slug]` branch implements, or null for any other branch. */
export function issueFromBranch(ref: string): number | null {
  const match = BRANCH.exec(ref);
  return match?.[1] === undefined ? null : Number(match[1]);
}

export type PullOrigin = {
  headRef: string;
  /** `owner/name` the head branch lives in; null when the forge names none. */
  headRepository: string | null;
  author: string;
};

/** Conveyor's own: from a `conveyor/<n>` branch of the project's repository (not a fork), opened by its account. */
export function isConveyorPull(pull: PullOrigin, repo: string, account: string): boolean {
  return (
    issueFromBranch(pull.headRef) !== null &&
    pull.headRepository !== null &&
    pull.headRepository.toLowerCase() === repo.toLowerCase() &&
    sameLogin(pull.author, account)
  );
}

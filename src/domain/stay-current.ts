/**
 * Staying current with the base branch: before the critic reviews and again before merging, Conveyor reads
 * the pull request's mergeable state from the forge and decides what to do. Pure: the forge's answer in, one
 * action out; the lifecycle counts the updates against `maxUpdates`.
 */
import { ALWAYS, type UpToDateRule, updateRequired } from "./up-to-date.ts";

/** The forge's answer, normalized (see `githubMergeability` and `giteaMergeability`). */
export type Mergeability =
  /** Up to date with the base and mergeable. */
  | { kind: "current" }
  /** The base moved on; the head still merges without conflict. */
  | { kind: "behind" }
  /** The head conflicts with the base. `files`: the conflicting paths where the forge names them. */
  | { kind: "conflict"; files: string[] }
  /** The forge is still computing it (GitHub's `mergeable: null`, `mergeable_state: unknown`). */
  | { kind: "unknown" }
  /**
   * Gitea's and Forgejo's `mergeable: false` naming no files: a conflict, or the re-check those forges run in
   * the background after the head or the base moved (the pull request's status is `checking`, which the API
   * does not show). Read again a few times before it counts as a conflict.
   */
  | { kind: "checking" };

export type StayCurrentAction =
  /** Review or merge the head as it is (current, or behind where no update is required). */
  | { action: "proceed" }
  /** Ask again shortly: the forge has no answer yet. */
  | { action: "ask_again" }
  /** Read it again in a moment (within this attempt): the forge may be re-checking it. */
  | { action: "read_again" }
  /** Let the forge merge the base into the head (its update-branch API); CI runs again on the new head. */
  | { action: "update_branch" }
  /** Resume the session to merge the base and resolve the conflicts (an `update` job). */
  | { action: "resolve_conflict"; files: string[] };

/**
 * How many reads of the pull request (`CHECKING_READ_INTERVAL_MS` apart: about 3 s) a `checking` answer gets
 * before it counts as a conflict: Gitea's re-check after a merge takes a second or two.
 */
export const CHECKING_READS = 5;
export const CHECKING_READ_INTERVAL_MS = 750;

/**
 * `reads`: how many times the pull request was read for this decision, `state` the last answer; `rule`
 * whether a head only behind its base is updated (./up-to-date.ts), else reviewed and merged as it is.
 */
export function stayCurrent(state: Mergeability, reads = 1, rule: UpToDateRule = ALWAYS): StayCurrentAction {
  switch (state.kind) {
    case "current":
      return { action: "proceed" };
    case "unknown":
      return { action: "ask_again" };
    case "checking":
      return reads < CHECKING_READS ? { action: "read_again" } : { action: "resolve_conflict", files: [] };
    case "behind":
      return updateRequired(rule) ? { action: "update_branch" } : { action: "proceed" };
    case "conflict":
      return { action: "resolve_conflict", files: state.files };
  }
}

/**
 * What GitHub's `mergeable` and `mergeable_state` alone settle: `dirty` (or `mergeable: false`), `behind`,
 * and `unknown` (or `mergeable: null`, still being computed); null for the rest. GitHub says `behind` only where
 * the base's protection requires an up-to-date head (strict required status checks); elsewhere a head many
 * commits behind reads `clean`, `blocked` (required reviews or checks), `unstable` (failing checks that are
 * not required), `has_hooks` or `draft`, so those leave open whether the head contains the base.
 */
function githubSays(mergeable: boolean | null, mergeableState: string | null): Mergeability | null {
  if (mergeableState === "dirty" || mergeable === false) return { kind: "conflict", files: [] };
  if (mergeableState === "behind") return { kind: "behind" };
  if (mergeable === null || mergeableState === null || mergeableState === "unknown")
    return { kind: "unknown" };
  return null;
}

/** Whether GitHub's answer needs the base compared with the head (`behindBy`) to tell current from behind. */
export const githubNeedsCompare = (mergeable: boolean | null, mergeableState: string | null): boolean =>
  githubSays(mergeable, mergeableState) === null;

/**
 * GitHub's pull request and, where `githubNeedsCompare`, `behindBy`: how many commits of the base branch's
 * head the head lacks (the compare API's `behind_by`), null when not read. Needed and not read, it is
 * `unknown` (ask again), never taken for current.
 */
export function githubMergeability(
  mergeable: boolean | null,
  mergeableState: string | null,
  behindBy: number | null,
): Mergeability {
  const said = githubSays(mergeable, mergeableState);
  if (said) return said;
  if (behindBy === null) return { kind: "unknown" };
  return behindBy > 0 ? { kind: "behind" } : { kind: "current" };
}

/**
 * Gitea and Forgejo: `mergeable` false is a conflict where the forge names the files (`conflicted_files`, where
 * the version sends it); naming none, it may as well be the forge's re-check after the head or base moved.
 * A head that contains the base's head cannot conflict: false there is only the re-check. A merge base that
 * is not the base branch's head means the base moved on.
 */
export function giteaMergeability(pull: {
  mergeable: boolean;
  mergeBase: string | null;
  baseSha: string | null;
  conflictedFiles: string[];
}): Mergeability {
  if (!pull.mergeable) {
    if (pull.conflictedFiles.length > 0) return { kind: "conflict", files: pull.conflictedFiles };
    return pull.mergeBase !== null && pull.mergeBase === pull.baseSha
      ? { kind: "unknown" }
      : { kind: "checking" };
  }
  if (pull.mergeBase === null || pull.baseSha === null) return { kind: "unknown" };
  return pull.mergeBase === pull.baseSha ? { kind: "current" } : { kind: "behind" };
}

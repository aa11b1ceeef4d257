/**
 * Staying current with the base branch: before the critic reviews and again before merging, Conveyor reads
 * the pull request's mergeable state from the forge and decides what to do. Pure: the forge's answer in, one
 * action out; the lifecycle counts the updates against `maxUpdates`.
 */

/** The forge's answer, normalized (see `githubMergeability` and `giteaMergeability`). */
export type Mergeability =
  /** Up to date with the base and mergeable. */
  | { kind: "current" }
  /** The base moved on; the head still merges without conflict. */
  | { kind: "behind" }
  /** The head conflicts with the base. `files`: the conflicting paths where the forge names them. */
  | { kind: "conflict"; files: string[] }
  /** The forge is still computing it (GitHub's `mergeable: null`, `mergeable_state: unknown`). */
  | { kind: "unknown" };

export type StayCurrentAction =
  /** Review or merge the head as it is. */
  | { action: "proceed" }
  /** Ask again shortly: the forge has no answer yet. */
  | { action: "ask_again" }
  /** Let the forge merge the base into the head (its update-branch API); CI runs again on the new head. */
  | { action: "update_branch" }
  /** Resume the session to merge the base and resolve the conflicts (an `update` job). */
  | { action: "resolve_conflict"; files: string[] };

export function stayCurrent(state: Mergeability): StayCurrentAction {
  switch (state.kind) {
    case "current":
      return { action: "proceed" };
    case "unknown":
      return { action: "ask_again" };
    case "behind":
      return { action: "update_branch" };
    case "conflict":
      return { action: "resolve_conflict", files: state.files };
  }
}

/**
 * GitHub's `mergeable` and `mergeable_state`: `behind` and `dirty` are what matter here; `blocked` (required
 * reviews or checks), `unstable` (failing non-required checks), `has_hooks`, `draft` and `clean` all mean the
 * head itself is current; `unknown`, or `mergeable: null`, is still being computed.
 */
export function githubMergeability(mergeable: boolean | null, mergeableState: string | null): Mergeability {
  if (mergeableState === "dirty" || mergeable === false) return { kind: "conflict", files: [] };
  if (mergeableState === "behind") return { kind: "behind" };
  if (mergeable === null || mergeableState === null || mergeableState === "unknown")
    return { kind: "unknown" };
  return { kind: "current" };
}

/**
 * Gitea and Forgejo: `mergeable` false is a conflict (their `conflicted_files` names the paths where the
 * version sends it); a merge base that is not the base branch's head means the base moved on.
 */
export function giteaMergeability(pull: {
  mergeable: boolean;
  mergeBase: string | null;
  baseSha: string | null;
  conflictedFiles: string[];
}): Mergeability {
  if (!pull.mergeable) return { kind: "conflict", files: pull.conflictedFiles };
  if (pull.mergeBase === null || pull.baseSha === null) return { kind: "unknown" };
  return pull.mergeBase === pull.baseSha ? { kind: "current" } : { kind: "behind" };
}

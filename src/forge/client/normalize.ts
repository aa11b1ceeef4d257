import type { CommitState, Permission } from "./types.ts";

/**
 * Gitea/Forgejo report "owner" for the repository owner; GitHub's `permission` is already one of the four,
 * and its finer `role_name` values (maintain, triage) fold into the nearest coarser level.
 */
export function toPermission(value: string): Permission {
  switch (value) {
    case "owner":
    case "admin":
      return "admin";
    case "maintain":
    case "write":
      return "write";
    case "triage":
    case "read":
      return "read";
    default:
      return "none";
  }
}

/**
 * Gitea's combined state is "" while a commit has no statuses yet (pending), and it knows "warning", which
 * Woodpecker sends for a declined pipeline: not green, so it gates like a failure.
 */
export function toCommitState(value: string): CommitState {
  switch (value) {
    case "success":
    case "failure":
    case "error":
      return value;
    case "warning":
      return "failure";
    default:
      return "pending";
  }
}

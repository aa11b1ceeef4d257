import { hasStatus } from "./errors.ts";
import type { MergeResult, PullRequest } from "./types.ts";

/**
 * Both forges refuse to merge a merged pull request with the same status they use for "cannot merge now"
 * (405; Gitea's message is even empty), and Gitea answers 404 for a closed one. Only the pull request itself
 * tells these apart, so a refusal is followed by one read of it.
 */
export async function settleMerge(
  merge: () => Promise<void>,
  read: () => Promise<PullRequest>,
): Promise<MergeResult> {
  try {
    await merge();
    return { kind: "merged", merged: true };
  } catch (error) {
    if (!hasStatus(error, 404, 405, 409)) throw error;
    const pull = await read();
    if (pull.merged) return { kind: "already_merged", merged: true };
    const reason =
      pull.state === "closed" ? "pull request is closed" : error.forgeMessage || `HTTP ${error.status}`;
    return { kind: "not_mergeable", merged: false, status: error.status, reason };
  }
}

/**
 * One agent run's worktree, its own and gone when the run ends: a plain run's at the base branch's head, a
 * review run's at a pull request's head. Both are on no branch; nothing in them is collected or pushed.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { type RemoteAccess, remoteGit } from "./remote.ts";
import { createWorktree, resolveRef, run, type Serial } from "./repository.ts";

/** One agent run's places: what the `Workspace` lends the functions below. */
export type AgentRunContext = {
  repoKey: string;
  runId: string;
  /** The private repository. */
  mirror: string;
  worktree: string;
  serial: Serial;
};

export async function createAgentWorktree(agentRun: AgentRunContext, baseBranch: string): Promise<string> {
  const { repoKey, mirror, worktree: path } = agentRun;
  return agentRun.serial(async () => {
    const base = await resolveRef(mirror, `refs/remotes/origin/${baseBranch}`);
    if (base === undefined)
      throw new Error(`agentWorktree(${repoKey}): no branch ${baseBranch} on the remote`);
    await rm(path, { recursive: true, force: true });
    await createWorktree(mirror, path, { branch: null, start: base, baseBranch, base });
    return path;
  });
}

export async function createReviewWorktree(
  agentRun: AgentRunContext,
  { baseBranch, ref, headSha }: { baseBranch: string; ref: string; headSha: string },
  remote: { access: RemoteAccess; remoteUrl: string },
): Promise<string> {
  const { repoKey, runId, mirror, worktree: path } = agentRun;
  return agentRun.serial(async () => {
    const base = await resolveRef(mirror, `refs/remotes/origin/${baseBranch}`);
    if (base === undefined)
      throw new Error(`reviewWorktree(${repoKey}): no branch ${baseBranch} on the remote`);
    // Kept under a ref of the run's own while the worktree borrows its objects; removeAgentWorktree drops it.
    await remoteGit(remote.access, mirror, remote.remoteUrl, [
      "fetch",
      "--quiet",
      "--no-tags",
      remote.remoteUrl,
      `+${ref}:${reviewRef(runId)}`,
    ]);
    const fetched = await resolveRef(mirror, reviewRef(runId));
    if (fetched !== headSha)
      throw new Error(`the pull request's head is ${fetched ?? "gone"}, not ${headSha}: nothing to review`);
    await rm(path, { recursive: true, force: true });
    await createWorktree(mirror, path, { branch: null, start: headSha, baseBranch, base });
    return path;
  });
}

export async function removeAgentWorktree({
  runId,
  mirror,
  worktree,
  serial,
}: AgentRunContext): Promise<void> {
  await rm(worktree, { recursive: true, force: true });
  if (existsSync(mirror) && (await resolveRef(mirror, reviewRef(runId))) !== undefined)
    await serial(() => run(mirror, ["update-ref", "-d", reviewRef(runId)]));
}

/** Where a review run's pull request head is kept in the private repository while the run lasts. */
const reviewRef = (runId: string) => `refs/conveyor-reviews/${runId}`;

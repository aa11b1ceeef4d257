import type { CommitStatus, Repo, StatusState, User } from "./state.ts";
import type { Store } from "./store.ts";

export function addStatus(
  store: Store,
  repo: Repo,
  sha: string,
  input: { state: StatusState; context: string; targetUrl: string; description: string },
  creator: User,
): CommitStatus {
  const status: CommitStatus = {
    id: store.nextId(),
    index: repo.statuses.filter((existing) => existing.sha === sha).length + 1,
    sha,
    ...input,
    creatorId: creator.id,
    createdAt: store.now(),
  };
  repo.statuses.push(status);
  return status;
}

/** The newest status of each context on `sha`, oldest context first (what the combined status shows). */
export function latestStatuses(repo: Repo, sha: string): CommitStatus[] {
  const latest = new Map<string, CommitStatus>();
  for (const status of repo.statuses) if (status.sha === sha) latest.set(status.context, status);
  return [...latest.values()].sort((a, b) => a.id - b.id);
}

// Gitea's commitStatusPriorities: the worst state wins.
const PRIORITY: Record<StatusState, number> = { error: 0, failure: 1, warning: 2, pending: 3, success: 4 };

/** Forgejo's combined state: the worst of the latest statuses; "" when there are none. */
export function combinedState(statuses: CommitStatus[]): StatusState | "" {
  let state: StatusState | "" = "";
  for (const status of statuses) {
    if (state === "" || PRIORITY[status.state] <= PRIORITY[state]) state = status.state;
  }
  return state;
}

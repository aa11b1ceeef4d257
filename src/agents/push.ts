/**
 * Whether a push webhook may have changed a project's agent definitions: a commit on its default branch that
 * added, removed or modified a file under `.conveyor/agents/`. Pure; the payload is parsed here.
 */
import { z } from "zod";
import { AGENTS_DIR } from "./catalog.ts";

const paths = z.array(z.string()).nullish();
const pushPayload = z.object({
  ref: z.string(),
  repository: z.object({ full_name: z.string() }),
  commits: z.array(z.object({ added: paths, removed: paths, modified: paths })).nullish(),
  /** Gitea/Forgejo: how many commits the push had; its `commits` may list fewer. */
  total_commits: z.number().int().nullish(),
});

/**
 * Whether the push (its JSON body) may have changed the agents on `project`'s default branch. A commit list
 * the forge cut short counts as a change: forgetting costs one read, missing a change five minutes of it.
 */
export function pushTouchesAgents(project: { repo: string; defaultBranch: string }, body: unknown): boolean {
  const push = pushPayload.safeParse(body);
  if (!push.success) return false;
  const { ref, repository, commits, total_commits } = push.data;
  if (repository.full_name.toLowerCase() !== project.repo.toLowerCase()) return false;
  if (ref !== `refs/heads/${project.defaultBranch}`) return false;
  if (!commits || (total_commits != null && total_commits > commits.length)) return true;
  return commits.some((commit) =>
    [commit.added, commit.removed, commit.modified].some((list) =>
      (list ?? []).some((path) => path.startsWith(AGENTS_DIR)),
    ),
  );
}

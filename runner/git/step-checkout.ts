/**
 * Where an action's steps run from: a checkout of the default branch at the formula's commit, made by the
 * runner from its private repository into a directory of its own. No session sees it but a step's sandbox,
 * read-only; what a session wrote in its worktree or HOME never runs as a step.
 */
import { rm } from "node:fs/promises";
import type { StepFiles } from "../../src/formulas/step-files.ts";
import { createWorktree, hasCommit, run, type Serial } from "./repository.ts";

export type StepCheckoutContext = { mirror: string; serial: Serial };

export class MissingCommitError extends Error {
  constructor(commit: string) {
    super(`the formula's commit ${commit.slice(0, 12)} is not in the runner's copy of the repository`);
  }
}

export async function createStepCheckout(
  { mirror, serial }: StepCheckoutContext,
  path: string,
  { commit, baseBranch }: { commit: string; baseBranch: string },
): Promise<void> {
  await serial(async () => {
    if (!(await hasCommit(mirror, commit))) throw new MissingCommitError(commit);
    await rm(path, { recursive: true, force: true });
    await createWorktree(mirror, path, { branch: null, start: commit, baseBranch, base: commit });
  });
}

/** Git modes of regular files: a link or a submodule is not what a command runs. */
const REGULAR = new Set(["100644", "100755"]);

/** The regular files among `paths` at `commit`, by blob id, read in the private repository. */
export async function fileIdsAt(
  { mirror }: StepCheckoutContext,
  commit: string,
  paths: readonly string[],
): Promise<StepFiles> {
  if (paths.length === 0) return {};
  if (!(await hasCommit(mirror, commit))) throw new MissingCommitError(commit);
  const out = await run(mirror, ["ls-tree", "-z", "--end-of-options", commit, "--", ...paths], {
    GIT_LITERAL_PATHSPECS: "1",
  });
  const files: StepFiles = {};
  for (const entry of out.split("\0").filter(Boolean)) {
    const [meta = "", path = ""] = entry.split("\t");
    const [mode = "", type, id = ""] = meta.split(" ");
    if (type === "blob" && REGULAR.has(mode) && paths.includes(path)) files[path] = id;
  }
  return files;
}

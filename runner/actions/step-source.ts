/**
 * What an action job's steps run from, all of it the runner's: the checkout of the formula's commit (made on
 * the first step, read-only to every step), a fresh HOME for each step, and the blob ids of the files a
 * command names at that commit (what an approval is checked against). Nothing in it is the session's: a
 * step never runs a script, a dotfile or a package.json the session could have written.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { StepFiles } from "../../src/formulas/step-files.ts";
import type { Workspace } from "../git/workspace.ts";

export type StepSource = {
  /** The checkout of the commit every step of the job runs from, made on first use. */
  checkout(): Promise<string>;
  /** What the checkout borrows (the private repository's objects), for the step's sandbox to read. */
  readonly readOnly: readonly string[];
  /** A new, empty HOME for one step; `close` removes what is left of it. */
  home(): Promise<string>;
  /** The regular files among `paths` at that commit, by blob id. */
  fileIds(paths: readonly string[]): Promise<StepFiles>;
  /** Removes the checkout and the HOMEs. */
  close(): Promise<void>;
};

/** What a step source needs of the git workspace (runner/git/workspace.ts), after `ensureMirror`. */
export type StepWorkspace = Pick<Workspace, "stepCheckout" | "fileIdsAt" | "objectsPath" | "baseHead">;

/**
 * The step source of a job of `repoKey` in `dir` (the runner's own; whatever an earlier attempt left there
 * is removed), at `commit`: the formula's, or the default branch's head as last fetched for a job from a
 * Worker that did not send it.
 */
export async function openStepSource(
  workspace: StepWorkspace,
  dir: string,
  { repoKey, baseBranch, commit }: { repoKey: string; baseBranch: string; commit: string | null },
): Promise<StepSource> {
  const at = commit ?? (await workspace.baseHead(repoKey, baseBranch));
  if (!at)
    throw new Error(`no branch ${baseBranch} on the remote: the action's steps have nothing to run from`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let checkout: Promise<string> | undefined;
  const path = join(dir, "checkout");
  return {
    readOnly: [workspace.objectsPath(repoKey)],
    checkout() {
      checkout ??= workspace.stepCheckout(repoKey, path, { commit: at, baseBranch }).then(() => path);
      // A failed checkout (the commit is gone) is tried again by the next step, not remembered.
      checkout.catch(() => {
        checkout = undefined;
      });
      return checkout;
    },
    home: () => mkdtemp(join(dir, "home-")),
    fileIds: (paths) => workspace.fileIdsAt(repoKey, at, paths),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

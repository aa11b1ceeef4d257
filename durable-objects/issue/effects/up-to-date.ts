/**
 * `merge.upToDate` for the stay-current gate (src/domain/up-to-date.ts): the rule the review's and the merge's
 * checks decide a head that is behind by, and the way back to updating when the forge refuses such a head.
 */

import type { LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import { ALWAYS, refusedAsBehind, type UpToDateRule } from "../../../src/domain/up-to-date.ts";
import type { ForgeClient } from "../../../src/forge/client/index.ts";
import type { ProjectSettings } from "../../../src/projects/config.ts";
import { keepCurrent, MergeabilityPending } from "./stay-current.ts";

/**
 * The project's rule, asked by `keepCurrent` only for a head that is behind: the base's protection is read
 * then, once per check, and only under `when_required` (the rule itself where the token may, else the branch).
 */
export const upToDateRule =
  (forge: ForgeClient, { settings }: { settings: Pick<ProjectSettings, "merge" | "defaultBranch"> }) =>
  async (): Promise<UpToDateRule> => {
    const { merge, defaultBranch } = settings;
    if (merge.upToDate === "always") return ALWAYS;
    return { setting: merge.upToDate, protection: await forge.getBranchProtection(defaultBranch) };
  };

/**
 * A merge the forge refused because the head is behind after all (its protection changed since it was read,
 * or a rule the branch's protection does not show, such as a GitHub ruleset): the head is brought up to date
 * as under `always`, with CI and the critic again, not escalated (`mayUpdate` as `keepCurrent` asks it: the
 * merge's turn still held). Null: a refusal of another kind.
 */
export async function updateRefusedAsBehind(
  forge: ForgeClient,
  pr: number,
  headSha: string | null,
  reason: string,
  mayUpdate: () => Promise<boolean>,
): Promise<LifecycleEvent | null> {
  if (!headSha || !refusedAsBehind(reason)) return null;
  const step = await keepCurrent(forge, pr, headSha, { mayUpdate });
  if (step) return step;
  // GitHub recomputes for a moment after the base moved: the merge is tried again with the outbox's backoff.
  throw new MergeabilityPending(`the forge refused #${pr} as behind its base but reads it current`);
}

/**
 * The CI gate, read from the forge: a webhook or a poll only says "look now". The forge's branch must be at
 * the head the runner reported, and that exact commit's statuses, check runs and check suites decide.
 */
import { headCheck, issueBranch } from "../domain/branch.ts";
import { ciVerdict } from "../domain/ci-verdict.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { Project } from "../projects/store.ts";
import { redExcerpt } from "./excerpt.ts";

/** The branch check alone: null when the forge's `conveyor/<n>` is at `headSha`. */
export async function checkHead(
  forge: ForgeClient,
  number: number,
  headSha: string,
): Promise<LifecycleEvent | null> {
  return headCheck(number, headSha, await forge.getBranchHead(issueBranch(number)));
}

/** The issue's `ci` (or `head_mismatch`) event for `headSha`; null while CI still runs. */
export async function readCi(
  env: Env,
  project: Project,
  forge: ForgeClient,
  number: number,
  headSha: string,
): Promise<LifecycleEvent | null> {
  const moved = await checkHead(forge, number, headSha);
  if (moved) return moved;
  const { ci } = project.settings;
  if (ci.kind === "none") return { type: "ci", result: "green", headSha };
  const verdict = ciVerdict(await forge.getCiReport(headSha), {
    pattern: ci.contextPattern,
    names: ci.requiredChecks,
  });
  switch (verdict.kind) {
    case "pending":
      return null;
    case "green":
      return { type: "ci", result: "green", headSha };
    case "red":
      return {
        type: "ci",
        result: "red",
        headSha,
        excerpt: await redExcerpt(env, project, verdict),
        checks: verdict.failing,
      };
  }
}

/**
 * Re-running the head's CI where the infrastructure failed it (src/domain/ci-rerun.ts): a Woodpecker
 * pipeline's restart, or a GitHub Actions run's failed jobs. Asked once: delivered again (an answer lost), it
 * first looks whether the CI moved on from the red result already. A CI that refuses (no permission, nothing
 * it can re-run) sends that red result to a fix session after all.
 */

import { z } from "zod";
import { readCi } from "../../../src/ci/gate.ts";
import { pipelineCommit, restartPipeline, WoodpeckerError } from "../../../src/ci/woodpecker-api.ts";
import { woodpeckerApiOf } from "../../../src/ci/woodpecker-project.ts";
import { sha256Hex } from "../../../src/crypto/tokens.ts";
import { type RerunTarget, reportIdentity } from "../../../src/domain/ci-rerun.ts";
import type { LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { type ForgeClient, hasStatus } from "../../../src/forge/client/index.ts";
import type { Project } from "../../../src/projects/store.ts";
import type { Deliverers, EffectContext } from "./deliverers.ts";
import { forgeOf } from "./forge.ts";

/** The CI has nothing to re-run, or no way to. */
class RerunRefused extends Error {}

export const CI_RERUN_DELIVERERS: Deliverers = {
  rerun_ci: async (effect, ctx) => {
    const { issue } = ctx;
    if (!issue.headSha) return undefined;
    const { project, forge } = await forgeOf(ctx);
    const now = await sha256Hex(reportIdentity(await forge.getCiReport(issue.headSha)));
    if (now !== effect.of) return undefined;
    try {
      for (const target of effect.targets) await rerun(ctx, project, forge, target);
      return undefined;
    } catch (error) {
      if (!refusedForGood(error)) throw error;
      return refused(ctx, project, forge, `the CI refused the re-run: ${errorMessage(error).slice(0, 300)}`);
    }
  },
};

async function rerun(ctx: EffectContext, project: Project, forge: ForgeClient, target: RerunTarget) {
  switch (target.ci) {
    case "woodpecker": {
      const api = await woodpeckerApiOf(ctx.env, project);
      if (!api) throw new RerunRefused("the project has no Woodpecker server and token any more");
      // Only the head's own pipeline: a status linking another repository's would have Conveyor restart it.
      const commit = await pipelineCommit(api, target.repoId, target.pipeline);
      if (commit !== ctx.issue.headSha)
        throw new RerunRefused(
          `Woodpecker pipeline ${target.pipeline} ran on ${commit.slice(0, 12)}, not the head`,
        );
      await restartPipeline(api, target.repoId, target.pipeline);
      return;
    }
    case "github-actions":
      if ((await forge.rerunFailedJobs(target.suiteId)) === 0)
        throw new RerunRefused(`no finished workflow run of check suite ${target.suiteId} to re-run`);
      return;
  }
}

/** A refusal trying again cannot change: no such pipeline or run, no permission, nothing to re-run. */
const refusedForGood = (error: unknown) =>
  error instanceof RerunRefused ||
  // A Woodpecker answer that does not parse will not parse the next time either.
  error instanceof z.ZodError ||
  (error instanceof WoodpeckerError
    ? error.status >= 400 && error.status < 500 && error.status !== 429
    : hasStatus(error, 401, 403, 404, 409, 422));

/** The head's red result as it stands, for a fix session; whatever else CI says now, as it says it. */
async function refused(
  ctx: EffectContext,
  project: Project,
  forge: ForgeClient,
  reason: string,
): Promise<LifecycleEvent | undefined> {
  const { issue } = ctx;
  const read = await readCi(ctx.env, project, forge, issue.number, issue.headSha ?? "");
  if (read?.type !== "ci" || read.result !== "red") return read ?? undefined;
  const { rerun: _, ...red } = read;
  return { ...red, rerunRefused: reason };
}

/**
 * The CI gate, read from the forge: a webhook or a poll only says "look now". The forge's branch must be at
 * the head the runner reported, and that exact commit's statuses, check runs and check suites decide. A red
 * result says which failing checks the infrastructure failed, and whether their CI can run them again
 * (src/domain/ci-rerun.ts): the lifecycle re-runs those before it spends a fix session.
 */

import { sha256Hex } from "../crypto/tokens.ts";
import { headCheck, issueBranch } from "../domain/branch.ts";
import { planRerun, reportIdentity, rerunApis } from "../domain/ci-rerun.ts";
import { ciVerdict } from "../domain/ci-verdict.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { Project } from "../projects/store.ts";
import { redExcerpt } from "./excerpt.ts";
import { flakyChecks } from "./flaky.ts";
import { woodpeckerApiOf } from "./woodpecker-project.ts";

/** The branch check alone: null when the forge's `conveyor/<n>` is at `headSha`. */
export async function checkHead(
  forge: ForgeClient,
  number: number,
  headSha: string,
  seenBy?: "ci",
): Promise<LifecycleEvent | null> {
  return headCheck(number, headSha, await forge.getBranchHead(issueBranch(number)), seenBy);
}

/** The issue's `ci` (or `head_mismatch`) event for `headSha`; null while CI still runs. */
export async function readCi(
  env: Env,
  project: Project,
  forge: ForgeClient,
  number: number,
  headSha: string,
): Promise<LifecycleEvent | null> {
  // Its callers (the CI webhook, reconciliation, the issue's CI watch) take the issue to wait for CI on
  // `headSha`; it may have moved on meanwhile, and its own update from the base moved the branch.
  const moved = await checkHead(forge, number, headSha, "ci");
  if (moved) return moved;
  const { ci, defaultBranch } = project.settings;
  // The checks branch protection requires gate the verdict too: the forge would refuse the merge without them.
  // The branch names them to any reader, in one conditional read (a 304 on every quiet reconciliation).
  const protection = await forge.getBranchProtection(defaultBranch, { branchOnly: true });
  const required = protection?.requiredChecks ?? [];
  if (ci.kind === "none" && required.length === 0) return { type: "ci", result: "green", headSha };
  const report = await forge.getCiReport(headSha);
  const verdict = ciVerdict(report, {
    // Without CI of its own the project counts only what protection requires (a pattern nothing is named).
    pattern: ci.kind === "none" ? "" : ci.contextPattern,
    names: ci.kind === "none" ? [] : ci.requiredChecks,
    protected: required,
  });
  switch (verdict.kind) {
    case "pending":
      return null;
    case "green":
      return { type: "ci", result: "green", headSha };
    case "red": {
      const woodpecker = await woodpeckerApiOf(env, project);
      const apis = rerunApis(report, {
        github: project.forge === "github",
        woodpecker: woodpecker?.url ?? null,
      });
      const plan = planRerun(verdict.failed, apis, await flakyChecks(env, project.id, Date.now()));
      // Re-run once the workflow run has ended (its suite's completion is another webhook, or poll).
      if (plan.wait && ci.reruns > 0) return null;
      return {
        type: "ci",
        result: "red",
        headSha,
        excerpt: await redExcerpt(verdict, woodpecker),
        checks: verdict.failing.map((check, i) => {
          const cause = plan.causes[i];
          return cause ? { ...check, cause } : check;
        }),
        fingerprint: await sha256Hex(reportIdentity(report)),
        // Every failing check failed for CI's sake: an escalation for it is retried once (src/domain/escalation.ts).
        ...(plan.causes.length > 0 &&
          plan.causes.every((cause) => cause !== null) && { infrastructure: true }),
        ...(ci.reruns > 0 && plan.targets.length > 0 && { rerun: plan.targets }),
      };
    }
  }
}

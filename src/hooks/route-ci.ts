/**
 * CI results the forge pushes (GitHub check suites and runs, workflow runs, commit statuses; Gitea status):
 * settled for the commit an issue waits on, they become its `ci` event. Commit statuses are read back as the
 * combined status, so one context's success never passes for the whole of CI.
 */
import { redExcerpt } from "../ci/excerpt.ts";
import { combinedVerdict } from "../domain/ci-verdict.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { CiEvent } from "../forge/webhooks/events.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { issueAwaitingCi } from "../projects/mirror.ts";
import { forgeClientFor, type Project } from "../projects/store.ts";
import type { Routed } from "./route-event.ts";

export async function routeCi(
  env: Env,
  project: Project,
  event: CiEvent,
  key: string,
  cause: Cause,
): Promise<Routed> {
  const { ci } = event;
  const number = await issueAwaitingCi(env, project.id, ci.sha);
  if (number === null) return { kind: "ignored", reason: `no issue waits for CI on ${ci.sha}` };
  const result = await settle(env, project, event);
  if (!result) return { kind: "routed", events: 0 };
  await sendEvent(env, project, number, `${key}:ci`, cause, result);
  return { kind: "routed", events: 1 };
}

async function settle(env: Env, project: Project, { ci }: CiEvent): Promise<LifecycleEvent | null> {
  const red = (excerpt: string): LifecycleEvent => ({ type: "ci", result: "red", headSha: ci.sha, excerpt });
  switch (ci.source) {
    case "status": {
      if (ci.state === "pending") return null;
      const forge = await forgeClientFor(env, project);
      const verdict = combinedVerdict(
        (await forge.getCombinedStatus(ci.sha)).statuses,
        project.settings.ci.contextPattern,
      );
      if (verdict.kind === "pending") return null;
      return verdict.kind === "green"
        ? { type: "ci", result: "green", headSha: ci.sha }
        : red(await redExcerpt(env, project, verdict));
    }
    case "check_run":
    case "workflow_job":
      // One failing check is enough to know; success waits for the suite.
      return ci.state === "failure" || ci.state === "error" ? red(describe(ci)) : null;
    case "check_suite":
    case "workflow_run":
      if (ci.state === "pending") return null;
      return ci.state === "success" ? { type: "ci", result: "green", headSha: ci.sha } : red(describe(ci));
  }
}

const describe = (ci: CiEvent["ci"]) =>
  [`${ci.context}: ${ci.state}`, ci.logExcerpt, ci.targetUrl].filter((part) => part).join("\n");

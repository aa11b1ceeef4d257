/**
 * Lifecycle effects on the project's job queue. Enqueueing is idempotent under the effect key (the ProjectDO
 * keeps one job per key); cancelling twice cancels nothing more.
 */

import { loadActionRun } from "../../../src/formulas/load.ts";
import { projectStub } from "../../../src/project-stub.ts";
import { cachedProject } from "../../../src/projects/cache.ts";
import { mirroredIssues } from "../../../src/projects/mirror.ts";
import { projectCacheTtl } from "../../../src/projects/prompt-cache.ts";
import { jobRequest } from "../../shared/job-request.ts";
import type { Deliverers } from "./deliverers.ts";

export const JOB_DELIVERERS: Deliverers = {
  enqueue_job: async (effect, { env, key, issue }) => {
    // As the webhook path sees it: one read per project every few seconds, not one per job.
    const registered = await cachedProject(env, issue.project);
    if (!registered) throw new Error(`project ${issue.project} is not registered`);
    const { project } = registered;
    // The text a writer queued; an issue triaged without one (by the operator) is read now, not at lease time.
    const brief = issue.brief ?? (await mirroredIssues(env, project.id, [issue.number]))[0];
    // An action's formula as the default branch has it now, its approved step as the vault item approved it;
    // a reap needs none.
    const approved = effect.approved && {
      ...effect.approved,
      payload: await projectStub(env, project.id).approvedVaultPayload(effect.approved.item),
    };
    const action =
      issue.kind === "action" && effect.job !== "reap"
        ? await loadActionRun(registered, issue.formula ?? null, approved)
        : undefined;
    const request = jobRequest(project, key, {
      kind: effect.job,
      number: issue.number,
      title: brief?.title ?? "",
      body: brief?.body ?? "",
      headSha: issue.headSha,
      // A continuation's iteration is counted when it is enqueued; the implement session's when dispatched.
      iteration: effect.job === "implement" ? issue.iteration + 1 : issue.iteration,
      sessionId: issue.sessionId,
      instructions: effect.detail ?? null,
      ...(action && { action }),
      ...(effect.job !== "reap" && { promptCacheTtl: await projectCacheTtl(env, project) }),
    });
    await projectStub(env, project.id).enqueue(request);
    return undefined;
  },
  cancel_jobs: async (_effect, { env, issue }) => {
    await projectStub(env, issue.project).cancel(issue.number);
    return undefined;
  },
};

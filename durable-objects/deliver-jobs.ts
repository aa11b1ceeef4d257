/**
 * Lifecycle effects on the project's job queue. Enqueueing is idempotent under the effect key (the ProjectDO
 * keeps one job per key); cancelling twice cancels nothing more.
 */
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { forgeIssues, projects } from "../src/db/schema.ts";
import { projectStub } from "../src/project-stub.ts";
import { budgetLimits } from "../src/projects/config.ts";
import { toProject } from "../src/projects/store.ts";
import type { Deliverers } from "./effects.ts";

export const JOB_DELIVERERS: Deliverers = {
  enqueue_job: async (effect, { env, key, issue }) => {
    // The project and the issue's text in one read.
    const row = await drizzle(env.DB)
      .select({ project: projects, title: forgeIssues.title, body: forgeIssues.body })
      .from(projects)
      .leftJoin(
        forgeIssues,
        and(eq(forgeIssues.projectId, projects.id), eq(forgeIssues.number, issue.number)),
      )
      .where(eq(projects.id, issue.project))
      .get();
    if (!row) throw new Error(`project ${issue.project} is not registered`);
    const project = toProject(row.project);
    const text = { title: row.title ?? "", body: row.body ?? "" };
    const { settings } = project;
    await projectStub(env, project.id).enqueue({
      key,
      spec: {
        kind: effect.job,
        project: project.id,
        issue: { number: issue.number, ...text },
        repo: { fullName: project.repo, cloneUrl: project.cloneUrl, defaultBranch: settings.defaultBranch },
        branch: issue.branch ?? `conveyor/${issue.number}`,
        // A continuation's iteration is counted when it is enqueued; the implement session's when dispatched.
        iteration: effect.job === "implement" ? issue.iteration + 1 : issue.iteration,
        sessionId: issue.sessionId,
        instructions: effect.detail ?? null,
        // Recomputed from the issue's spend when the job is leased.
        budget: { maxTurns: settings.maxTurnsPerSession, usdRemaining: settings.issueBudgetUsd },
      },
      policy: { parallel: settings.parallel, ...settings.jobs, budget: budgetLimits(settings) },
    });
    return undefined;
  },
  cancel_jobs: async (_effect, { env, issue }) => {
    await projectStub(env, issue.project).cancel(issue.number);
    return undefined;
  },
};

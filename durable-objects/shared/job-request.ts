/**
 * The job queue's request for an issue's job: what the IssueDO's `enqueue_job` effect and the supervisor's
 * remedies send the ProjectDO, with the project's repository, sandbox and policy.
 */
import type { EnqueueRequest } from "../../src/contracts/project-object.ts";
import { issueBranch } from "../../src/domain/branch.ts";
import type { JobKind } from "../../src/domain/lifecycle.ts";
import type { PromptCacheTtl } from "../../src/domain/prompt-cache.ts";
import { budgetLimits } from "../../src/projects/config.ts";
import type { Project } from "../../src/projects/store.ts";
import type { ActionRun } from "../../src/runner-api/contract.ts";

/** What a job of an issue carries beyond what the project says. */
export type IssueJob = {
  kind: JobKind;
  number: number;
  title: string;
  body: string;
  headSha: string | null;
  iteration: number;
  sessionId: string | null;
  instructions: string | null;
  /** An action issue's session: its formula and the step the vault approved for this job. */
  action?: ActionRun;
  /** The prompt cache's lifetime its session asks for (src/projects/prompt-cache.ts); 5 minutes when absent. */
  promptCacheTtl?: PromptCacheTtl;
};

/** The queue's request for an issue's job under `key`, with the project's repository, sandbox and policy. */
export function jobRequest(project: Project, key: string, job: IssueJob): EnqueueRequest {
  const { settings } = project;
  return {
    key,
    spec: {
      kind: job.kind,
      project: project.id,
      issue: { number: job.number, title: job.title, body: job.body },
      repo: { fullName: project.repo, cloneUrl: project.cloneUrl, defaultBranch: settings.defaultBranch },
      branch: issueBranch(job.number),
      headSha: job.headSha,
      iteration: job.iteration,
      sessionId: job.sessionId,
      instructions: job.instructions,
      // Recomputed from the issue's spend when the job is leased.
      budget: { maxTurns: settings.maxTurnsPerSession, usdRemaining: settings.issueBudgetUsd },
      sandbox: settings.sandbox,
      promptCacheTtl: job.promptCacheTtl ?? "5m",
      ...(job.action && { action: job.action }),
    },
    policy: { parallel: settings.parallel, ...settings.jobs, budget: budgetLimits(settings) },
  };
}

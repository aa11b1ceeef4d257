/**
 * A runner's report on the jobs it holds (report-contract.ts), passed to each job's ProjectDO: one call per
 * project in the report, all at once, each object fencing its jobs one by one. A job of no project is refused
 * alone, as its own route would refuse it.
 */
import type { JobReport } from "../contracts/project-object.ts";
import type { Env } from "../env.ts";
import { projectOfJob, projectStub } from "../project-stub.ts";
import type { ReportItem } from "./report-contract.ts";

/** Each job's answer, in the order of `items`. */
export async function reportJobs(
  env: Env,
  runnerId: string,
  items: readonly ReportItem[],
): Promise<(JobReport & { jobId: string })[]> {
  const answers: JobReport[] = items.map((item) => ({
    ok: false,
    status: 404,
    error: `job ${item.jobId} is unknown`,
  }));
  await Promise.all(
    [...byProject(items)].map(async ([project, indices]) => {
      const answered = await projectStub(env, project).report(
        runnerId,
        indices.map((i) => items[i] as ReportItem),
      );
      answered.forEach((answer, k) => {
        answers[indices[k] as number] = answer;
      });
    }),
  );
  return answers.map((answer, i) => ({ jobId: (items[i] as ReportItem).jobId, ...answer }));
}

/** The indices of the items of each project named by a job id. */
export function byProject(items: readonly Pick<ReportItem, "jobId">[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, i) => {
    const project = projectOfJob(item.jobId);
    if (project === null) return;
    const group = groups.get(project);
    if (group) group.push(i);
    else groups.set(project, [i]);
  });
  return groups;
}

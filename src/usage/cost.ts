import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";

/**
 * What an issue has cost across all its iterations: the ProjectDO's record of every usage report, the source
 * of the dashboard's figures too (its D1 rows are copied from the same records, a moment later).
 */
export async function issueCostUsd(env: Env, projectId: string, number: number): Promise<number> {
  return projectStub(env, projectId).issueSpendUsd(number);
}

import { sql, sum } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { usage } from "../db/schema.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";

const DAY_MS = 86_400_000;

/**
 * What an issue has cost across all its iterations: the ProjectDO's record of every usage report, the source
 * of the dashboard's figures too (its D1 rows are copied from the same records, a moment later).
 */
export async function issueCostUsd(env: Env, projectId: string, number: number): Promise<number> {
  return projectStub(env, projectId).issueSpendUsd(number);
}

export type ProjectCost = { totalUsd: number; todayUsd: number };

/** Each project's spend in all and today (UTC, the day the daily budget counts), by project id. */
export async function projectCosts(env: Env, now = Date.now()): Promise<Map<string, ProjectCost>> {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const rows = await drizzle(env.DB)
    .select({
      projectId: usage.projectId,
      totalUsd: sum(usage.usd).mapWith(Number),
      todayUsd:
        sql<number>`coalesce(sum(case when ${usage.at} >= ${today} then ${usage.usd} end), 0)`.mapWith(
          Number,
        ),
    })
    .from(usage)
    .groupBy(usage.projectId)
    .all();
  return new Map(rows.map(({ projectId, ...cost }) => [projectId, cost]));
}

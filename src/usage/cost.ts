import { and, eq, sql, sum } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { usage } from "../db/schema.ts";
import type { Env } from "../env.ts";

const DAY_MS = 86_400_000;

/** What an issue has cost across all its iterations, as the dashboard and the status show it (D1). */
export async function issueCostUsd(env: Env, projectId: string, number: number): Promise<number> {
  const row = await drizzle(env.DB)
    .select({ usd: sum(usage.usd) })
    .from(usage)
    .where(and(eq(usage.projectId, projectId), eq(usage.number, number)))
    .get();
  return Number(row?.usd ?? 0);
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

import { and, desc, eq, gte, sql, sum } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { forgeIssues, issues, usage } from "../db/schema.ts";
import type { Env } from "../env.ts";
import type { CostQuery, CostReport } from "./cost-report.ts";

export const DAY_MS = 86_400_000;

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

const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** The report for `project` (null: all), over `usage_by_day` where a project is given. */
export async function costReport(
  env: Env,
  project: string | null,
  { days, limit }: CostQuery,
  now = Date.now(),
): Promise<CostReport> {
  const d = drizzle(env.DB);
  const firstDay = Math.floor(now / DAY_MS) - days + 1;
  const inWindow = and(
    project === null ? undefined : eq(usage.projectId, project),
    gte(usage.at, firstDay * DAY_MS),
  );
  const day = sql<number>`${usage.at} / ${sql.raw(String(DAY_MS))}`.mapWith(Number);
  const usd = sum(usage.usd).mapWith(Number);
  const [perDay, perIssue] = await d.batch([
    d.select({ day, usd }).from(usage).where(inWindow).groupBy(day),
    d
      .select({
        project: usage.projectId,
        number: usage.number,
        usd,
        state: issues.state,
        title: forgeIssues.title,
      })
      .from(usage)
      .leftJoin(issues, and(eq(issues.projectId, usage.projectId), eq(issues.number, usage.number)))
      .leftJoin(
        forgeIssues,
        and(eq(forgeIssues.projectId, usage.projectId), eq(forgeIssues.number, usage.number)),
      )
      .where(inWindow)
      .groupBy(usage.projectId, usage.number)
      .orderBy(desc(usd), usage.projectId, usage.number)
      .limit(limit),
  ]);
  const spent = new Map(perDay.map((row) => [row.day, row.usd]));
  return {
    project,
    from: firstDay * DAY_MS,
    totalUsd: perDay.reduce((total, row) => total + row.usd, 0),
    days: Array.from({ length: days }, (_, i) => ({
      day: isoDay(firstDay + i),
      usd: spent.get(firstDay + i) ?? 0,
    })),
    issues: perIssue,
  };
}

/** Whether D1 holds any spend of `project` (one that is no longer registered still has its costs). */
export async function hasSpend(env: Env, project: string): Promise<boolean> {
  const row = await drizzle(env.DB)
    .select({ at: usage.at })
    .from(usage)
    .where(eq(usage.projectId, project))
    .limit(1)
    .get();
  return row !== undefined;
}

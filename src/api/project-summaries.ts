/** Issues per lifecycle state for each project, from the D1 index: the CLI's status and the dashboard's overview. */
import { count, eq } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import { issues } from "../db/schema.ts";
import type { Env } from "../env.ts";
import { listProjects } from "../projects/store.ts";
import { projectCosts } from "../usage/cost.ts";

export type StateCounts = Record<string, number>;

export type ProjectSummary = {
  id: string;
  /** Null for a project that has issues in D1 but is no longer registered. */
  repo: string | null;
  forge: string | null;
  states: StateCounts;
  total: number;
  /** Model spend in USD, in all and today (UTC). */
  costUsd: number;
  todayUsd: number;
};

/** A covering scan of `issues_by_state`, for one project or all. */
export function stateCountsQuery(d: DrizzleD1Database, projectId?: string) {
  return d
    .select({ projectId: issues.projectId, state: issues.state, n: count() })
    .from(issues)
    .where(projectId === undefined ? undefined : eq(issues.projectId, projectId))
    .groupBy(issues.projectId, issues.state);
}

export function countsByProject(rows: { projectId: string; state: string; n: number }[]) {
  const counts = new Map<string, StateCounts>();
  for (const { projectId, state, n } of rows) counts.set(projectId, { ...counts.get(projectId), [state]: n });
  return counts;
}

export const total = (states: StateCounts) => Object.values(states).reduce((sum, n) => sum + n, 0);

/** Every registered project, and every project D1 still has issues (or spend) for, by id. */
export async function projectSummaries(env: Env): Promise<ProjectSummary[]> {
  const [registered, rows, costs] = await Promise.all([
    listProjects(env),
    stateCountsQuery(drizzle(env.DB)).all(),
    projectCosts(env),
  ]);
  const counts = countsByProject(rows);
  const ids = [...new Set([...registered.map((p) => p.id), ...counts.keys(), ...costs.keys()])].sort();
  return ids.map((id) => {
    const project = registered.find((p) => p.id === id);
    const states = counts.get(id) ?? {};
    const cost = costs.get(id);
    return {
      id,
      repo: project?.repo ?? null,
      forge: project?.forge ?? null,
      states,
      total: total(states),
      costUsd: cost?.totalUsd ?? 0,
      todayUsd: cost?.todayUsd ?? 0,
    };
  });
}

/**
 * The dashboard's reads from D1. Every query is answered from an index (noted per query) and every page
 * sends its queries in one batch; nothing here calls a Durable Object.
 */
import { and, asc, count, desc, eq, getTableColumns, gte, inArray, type SQL, sql, sum } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import { stateCountsQuery } from "../api/project-summaries.ts";
import { criticReports, forgeIssues, issues, jobs, runners, usage, vaultItems } from "../db/schema.ts";
import { STATES, type State } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";

/** Cards per board column; the column's state page has the rest. */
export const COLUMN_SIZE = 12;
export const PAGE_SIZE = 50;
export const APPROVAL_LIMIT = 100;
export const APPROVAL_STATES = ["awaiting_approval", "escalated"] as const satisfies readonly State[];
export const DAY_MS = 86_400_000;
/** D1 binds at most 100 parameters per statement. */
const MAX_IN = 90;

/** Keyset paging within a state, newest first: `<updatedAt>.<number>` of the last issue shown. */
export const cursorSchema = z
  .string()
  .regex(/^\d{1,15}\.\d{1,15}$/, "cursor is <updatedAt>.<number>")
  .transform((text) => {
    const [at = 0, number = 0] = text.split(".").map(Number);
    return { at, number };
  });
export type Cursor = z.output<typeof cursorSchema>;
export const cursorOf = (issue: { updatedAt: number; number: number }) =>
  `${issue.updatedAt}.${issue.number}`;

const cardFields = {
  projectId: issues.projectId,
  number: issues.number,
  state: issues.state,
  iteration: issues.iteration,
  reason: issues.reason,
  prNumber: issues.prNumber,
  updatedAt: issues.updatedAt,
  title: forgeIssues.title,
};

/** Issues with their forge titles (a primary-key lookup each). */
function cards(d: DrizzleD1Database, where: SQL | undefined, limit: number, order: SQL[]) {
  return d
    .select(cardFields)
    .from(issues)
    .leftJoin(
      forgeIssues,
      and(eq(forgeIssues.projectId, issues.projectId), eq(forgeIssues.number, issues.number)),
    )
    .where(where)
    .orderBy(...order)
    .limit(limit);
}
export type IssueCard = Awaited<ReturnType<typeof cards>>[number];

const newestFirst = [desc(issues.updatedAt), desc(issues.number)];
const inState = (project: string, state: State) =>
  and(eq(issues.projectId, project), eq(issues.state, state));

/** Counts per state and the newest issues of each state: `issues_by_state` (project_id, state, updated_at). */
export async function board(env: Env, project: string) {
  const d = drizzle(env.DB);
  const [counts, ...columns] = await d.batch([
    stateCountsQuery(d, project),
    ...STATES.map((state) => cards(d, inState(project, state), COLUMN_SIZE, newestFirst)),
  ]);
  return STATES.map((state, i) => ({
    state,
    count: counts.find((row) => row.state === state)?.n ?? 0,
    issues: columns[i] ?? [],
  }));
}

/** One page of a state, newest first, by keyset on `issues_by_state`. */
export async function statePage(env: Env, project: string, state: State, before?: Cursor) {
  const d = drizzle(env.DB);
  const after = before && sql`(${issues.updatedAt}, ${issues.number}) < (${before.at}, ${before.number})`;
  const [rows, [total]] = await d.batch([
    cards(d, and(inState(project, state), after), PAGE_SIZE + 1, newestFirst),
    d.select({ n: count() }).from(issues).where(inState(project, state)),
  ]);
  const shown = rows.slice(0, PAGE_SIZE);
  const last = shown.at(-1);
  return {
    issues: shown,
    total: total?.n ?? 0,
    next: rows.length > PAGE_SIZE && last ? cursorOf(last) : null,
  };
}

/**
 * An issue whose approval waits in the vault: the vault's item (listed with the vault's own form) is the one
 * place to decide it. `vault_items_by_state` (state, created_at): the pending items are few.
 */
const inVault = sql`EXISTS (SELECT 1 FROM ${vaultItems} WHERE ${vaultItems.state} = 'pending'
  AND ${vaultItems.projectId} = ${issues.projectId}
  AND json_extract(${vaultItems.requester}, '$.type') = 'issue'
  AND json_extract(${vaultItems.requester}, '$.issue') = ${issues.number})`;

/**
 * Oldest first: who has waited longest, each once (a held merge or an action's step whose vault item is
 * pending is the vault's, not listed here too). `issues_by_update` (state, updated_at).
 */
export async function approvalQueue(env: Env) {
  const d = drizzle(env.DB);
  const waiting = and(inArray(issues.state, APPROVAL_STATES), sql`NOT ${inVault}`);
  const [rows, [total]] = await d.batch([
    cards(d, waiting, APPROVAL_LIMIT, [asc(issues.updatedAt), asc(issues.projectId), asc(issues.number)]),
    d.select({ n: count() }).from(issues).where(waiting),
  ]);
  return { issues: rows, total: total?.n ?? 0 };
}

const totalOf = (column: SQLiteColumn) => sum(column).mapWith(Number);

/** What D1 holds about one issue besides its lifecycle: title, jobs, usage per iteration, critic reports. */
export async function issueRecords(env: Env, project: string, number: number) {
  const d = drizzle(env.DB);
  const [forge, jobRows, usageRows, reports] = await d.batch([
    d
      .select({ title: forgeIssues.title, state: forgeIssues.state, labels: forgeIssues.labels })
      .from(forgeIssues)
      .where(and(eq(forgeIssues.projectId, project), eq(forgeIssues.number, number))),
    // jobs_by_issue; the runner by its name (null once revoked: its id then)
    d
      .select({ ...getTableColumns(jobs), runnerName: runners.name })
      .from(jobs)
      .leftJoin(runners, eq(runners.id, jobs.runnerId))
      .where(and(eq(jobs.projectId, project), eq(jobs.number, number)))
      .orderBy(asc(jobs.createdAt)),
    // usage_by_issue
    d
      .select({
        iteration: usage.iteration,
        inputTokens: totalOf(usage.inputTokens),
        outputTokens: totalOf(usage.outputTokens),
        cacheReadTokens: totalOf(usage.cacheReadTokens),
        cacheWriteTokens: totalOf(usage.cacheWriteTokens),
        usd: totalOf(usage.usd),
        turns: totalOf(usage.turns),
      })
      .from(usage)
      .where(and(eq(usage.projectId, project), eq(usage.number, number)))
      .groupBy(usage.iteration)
      .orderBy(asc(usage.iteration)),
    // critic_reports_by_issue
    d
      .select()
      .from(criticReports)
      .where(and(eq(criticReports.projectId, project), eq(criticReports.number, number)))
      .orderBy(asc(criticReports.round), asc(criticReports.at)),
  ]);
  return { forge: forge[0] ?? null, jobs: jobRows, usage: usageRows, criticReports: reports };
}
export type IterationUsage = Awaited<ReturnType<typeof issueRecords>>["usage"][number];

/** USD per project and UTC day over the last `days` days, zero-filled: `usage_by_day` (project_id, at). */
export async function dailyCost(env: Env, projects: string[], days = 30, now = Date.now()) {
  const d = drizzle(env.DB);
  const firstDay = Math.floor(now / DAY_MS) - days + 1;
  const day = sql<number>`${usage.at} / ${sql.raw(String(DAY_MS))}`.mapWith(Number);
  const chunks = Array.from({ length: Math.ceil(projects.length / MAX_IN) }, (_, i) =>
    projects.slice(i * MAX_IN, (i + 1) * MAX_IN),
  );
  const rows = (
    await Promise.all(
      chunks.map((ids) =>
        d
          .select({ projectId: usage.projectId, day, usd: totalOf(usage.usd) })
          .from(usage)
          .where(and(inArray(usage.projectId, ids), gte(usage.at, firstDay * DAY_MS)))
          .groupBy(usage.projectId, day),
      ),
    )
  ).flat();
  const spent = new Map(rows.map((r) => [`${r.projectId} ${r.day}`, r.usd]));
  return new Map(
    projects.map((project) => [
      project,
      Array.from({ length: days }, (_, i) => ({
        day: firstDay + i,
        usd: spent.get(`${project} ${firstDay + i}`) ?? 0,
      })),
    ]),
  );
}

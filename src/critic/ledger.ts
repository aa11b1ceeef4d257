/** The critic's earlier rounds for an issue, from D1: what the next round checks was addressed. */
import { and, asc, count, eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { criticReports } from "../db/schema.ts";
import type { Env } from "../env.ts";
import { type CriticReport, type Finding, findingSchema, reportSchema } from "./report.ts";

export async function criticLedger(env: Env, projectId: string, number: number) {
  const rows = await drizzle(env.DB)
    .select()
    .from(criticReports)
    .where(and(eq(criticReports.projectId, projectId), eq(criticReports.number, number)))
    .orderBy(asc(criticReports.round))
    .all();
  return rows.map((r) => ({
    round: r.round,
    findings: findingSchema.array().parse(r.findings) as Finding[],
  }));
}

/**
 * Keeps a report as the next round: rounds count every review of the issue (1, 2, …), whatever came
 * between them (changes requested, a re-review after the base moved, a retry). A retried delivery of the same
 * review (`id`) writes nothing.
 */
export async function saveReport(
  env: Env,
  row: { id: string; projectId: string; number: number; headSha: string | null },
  report: CriticReport,
) {
  const round = sql`(SELECT COUNT(*) + 1 FROM ${criticReports} WHERE ${criticReports.projectId} = ${row.projectId} AND ${criticReports.number} = ${row.number})`;
  await drizzle(env.DB)
    .insert(criticReports)
    .values({
      ...row,
      round,
      verdict: report.verdict,
      summary: report.summary,
      findings: report.findings,
      at: Date.now(),
    })
    .onConflictDoNothing();
}

/**
 * The report kept under `id` (the request_review effect's key), if an earlier delivery of the effect got that
 * far: delivered again, the review is applied from it, and the critic (a paid call) is not asked twice.
 */
export async function savedReport(env: Env, id: string): Promise<CriticReport | null> {
  const row = await drizzle(env.DB).select().from(criticReports).where(eq(criticReports.id, id)).get();
  return row
    ? reportSchema.parse({ verdict: row.verdict, summary: row.summary, findings: row.findings })
    : null;
}

/** How many rounds the critic reviewed the issue in all (the lifecycle's `criticRounds` counts changes requested in a row). */
export async function criticRoundCount(env: Env, projectId: string, number: number): Promise<number> {
  const row = await drizzle(env.DB)
    .select({ n: count() })
    .from(criticReports)
    .where(and(eq(criticReports.projectId, projectId), eq(criticReports.number, number)))
    .get();
  return row?.n ?? 0;
}

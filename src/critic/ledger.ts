/** The critic's earlier rounds for an issue, from D1: what the next round checks was addressed. */
import { and, asc, eq } from "drizzle-orm";
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

export async function saveReport(
  env: Env,
  row: { id: string; projectId: string; number: number; round: number; headSha: string | null },
  report: CriticReport,
) {
  await drizzle(env.DB)
    .insert(criticReports)
    .values({
      ...row,
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

import { and, eq, sum } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { usage } from "../db/schema.ts";
import type { Env } from "../env.ts";

/** What an issue has cost across all its iterations. */
export async function issueCostUsd(env: Env, projectId: string, number: number): Promise<number> {
  const row = await drizzle(env.DB)
    .select({ usd: sum(usage.usd) })
    .from(usage)
    .where(and(eq(usage.projectId, projectId), eq(usage.number, number)))
    .get();
  return Number(row?.usd ?? 0);
}

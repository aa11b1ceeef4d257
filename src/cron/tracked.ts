import { and, eq, notInArray } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { issues } from "../db/schema.ts";
import { TERMINAL_STATES } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";

/** Issues of the project whose lifecycle has not ended, from the D1 index. */
export async function liveTrackedIssues(env: Env, projectId: string): Promise<number[]> {
  const rows = await drizzle(env.DB)
    .select({ number: issues.number })
    .from(issues)
    .where(and(eq(issues.projectId, projectId), notInArray(issues.state, [...TERMINAL_STATES])))
    .all();
  return rows.map((r) => r.number);
}

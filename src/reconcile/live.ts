import { and, eq, notInArray } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { issues } from "../db/schema.ts";
import { TERMINAL_STATES } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";

/** A live lifecycle as the D1 index holds it: what reconciliation checks against the forge. */
export type LiveIssue = {
  number: number;
  state: string;
  headSha: string | null;
  prNumber: number | null;
  /** When the index last changed: for an escalated issue, about when it escalated. */
  updatedAt: number;
};

/** Issues of the project whose lifecycle has not ended, from the D1 index (one read). */
export async function liveIssues(env: Env, projectId: string): Promise<LiveIssue[]> {
  return drizzle(env.DB)
    .select({
      number: issues.number,
      state: issues.state,
      headSha: issues.headSha,
      prNumber: issues.prNumber,
      updatedAt: issues.updatedAt,
    })
    .from(issues)
    .where(and(eq(issues.projectId, projectId), notInArray(issues.state, [...TERMINAL_STATES])))
    .all();
}

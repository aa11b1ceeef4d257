import { and, eq, notInArray } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { issues } from "../db/schema.ts";
import { TERMINAL_STATES } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { Cause } from "../projects/lifecycle-client.ts";
import type { Project } from "../projects/store.ts";
import type { ItemFailures } from "./failures.ts";

/** A live lifecycle as the D1 index holds it: what reconciliation checks against the forge. */
export type LiveIssue = {
  number: number;
  state: string;
  headSha: string | null;
  prNumber: number | null;
  /** When the index last changed: for an escalated issue, about when it escalated. */
  updatedAt: number;
};

/**
 * What the cycle's reads of live issues' threads share: the project and its forge, the cycle's cause, the live
 * issues, the numbers the cycle's listing showed changed (only those are read), and where a failed one is noted.
 */
export type ChangedThreads = {
  env: Env;
  project: Project;
  forge: ForgeClient;
  cause: Cause;
  live: readonly LiveIssue[];
  changed: ReadonlySet<number>;
  failures: ItemFailures;
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

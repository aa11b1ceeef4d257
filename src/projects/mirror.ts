/** Conveyor's copy of each forge issue (from webhooks and reconciliation), and who depends on whom. */
import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { drizzle } from "drizzle-orm/d1";
import { forgeIssues, issueDependencies, issues } from "../db/schema.ts";
import type { Env } from "../env.ts";

export type MirroredIssue = {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  dependsOn: number[];
};

/**
 * Writes the issue and replaces its dependency edges in one batch (one transaction), reading back the
 * issue's lifecycle state from the D1 index in the same round trip. `unless` (an SQL condition) skips the
 * writes when it holds — a delivery already seen — so a replayed old delivery cannot roll the mirror back.
 */
export async function mirrorIssue(
  env: Env,
  projectId: string,
  issue: MirroredIssue,
  options: { now?: number; unless?: SQL; first?: BatchItem<"sqlite">; also?: BatchItem<"sqlite">[] } = {},
): Promise<{ state: string | undefined; first: unknown }> {
  const { now = Date.now(), unless = sql`0`, also = [] } = options;
  // `first` reads before the writes, in the same round trip (a dedupe check).
  const head = options.first ? [options.first] : [];
  const d = drizzle(env.DB);
  const row = { projectId, ...issue, updatedAt: now };
  const { number, title, body, state, labels, dependsOn } = issue;
  const results = await d.batch([
    ...head,
    d
      .select({ state: issues.state })
      .from(issues)
      .where(and(eq(issues.projectId, projectId), eq(issues.number, number))),
    d
      .insert(forgeIssues)
      .select(
        sql`SELECT ${projectId}, ${number}, ${title}, ${body}, ${state}, ${JSON.stringify(labels)},
          ${JSON.stringify(dependsOn)}, ${now} WHERE NOT (${unless})`,
      )
      .onConflictDoUpdate({ target: [forgeIssues.projectId, forgeIssues.number], set: row }),
    d
      .delete(issueDependencies)
      .where(
        and(
          eq(issueDependencies.projectId, projectId),
          eq(issueDependencies.dependent, number),
          sql`NOT (${unless})`,
        ),
      ),
    d
      .insert(issueDependencies)
      .select(
        sql`SELECT ${projectId}, value, ${number} FROM json_each(${JSON.stringify(dependsOn)}) WHERE NOT (${unless})`,
      )
      .onConflictDoNothing(),
    ...also,
  ] as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  const rows = results[head.length] as { state: string }[];
  return { state: rows[0]?.state, first: head.length > 0 ? results[0] : undefined };
}

export async function setMirroredState(
  env: Env,
  projectId: string,
  number: number,
  state: "open" | "closed",
) {
  await drizzle(env.DB)
    .update(forgeIssues)
    .set({ state, updatedAt: Date.now() })
    .where(and(eq(forgeIssues.projectId, projectId), eq(forgeIssues.number, number)));
}

export async function mirroredIssues(
  env: Env,
  projectId: string,
  numbers: number[],
): Promise<MirroredIssue[]> {
  if (numbers.length === 0) return [];
  const rows = await drizzle(env.DB)
    .select()
    .from(forgeIssues)
    .where(and(eq(forgeIssues.projectId, projectId), inArray(forgeIssues.number, numbers)))
    .all();
  return rows.map(({ projectId: _p, updatedAt: _u, ...issue }) => issue);
}

export async function dependentsOf(env: Env, projectId: string, dependency: number): Promise<number[]> {
  const rows = await drizzle(env.DB)
    .select({ dependent: issueDependencies.dependent })
    .from(issueDependencies)
    .where(and(eq(issueDependencies.projectId, projectId), eq(issueDependencies.dependency, dependency)))
    .all();
  return rows.map((r) => r.dependent);
}

/** The project's whole dependency graph, for cycle detection. */
export async function dependencyGraph(env: Env, projectId: string): Promise<Map<number, number[]>> {
  const rows = await drizzle(env.DB)
    .select()
    .from(issueDependencies)
    .where(eq(issueDependencies.projectId, projectId))
    .all();
  const graph = new Map<number, number[]>();
  for (const { dependent, dependency } of rows)
    graph.set(dependent, [...(graph.get(dependent) ?? []), dependency]);
  return graph;
}

/** Lifecycle states from the D1 index (flushed by each IssueDO); absent = never entered the lifecycle. */
export async function lifecycleStates(
  env: Env,
  projectId: string,
  numbers: number[],
): Promise<Map<number, string>> {
  if (numbers.length === 0) return new Map();
  const rows = await drizzle(env.DB)
    .select({ number: issues.number, state: issues.state })
    .from(issues)
    .where(and(eq(issues.projectId, projectId), inArray(issues.number, numbers)))
    .all();
  return new Map(rows.map((r) => [r.number, r.state]));
}

/** The issue whose pull request this is, from the D1 index. */
export async function issueOfPull(env: Env, projectId: string, pull: number): Promise<number | null> {
  const row = await drizzle(env.DB)
    .select({ number: issues.number })
    .from(issues)
    .where(and(eq(issues.projectId, projectId), eq(issues.prNumber, pull)))
    .get();
  return row?.number ?? null;
}

/** The issue waiting for CI on this commit, from the D1 index. */
export async function issueAwaitingCi(env: Env, projectId: string, sha: string): Promise<number | null> {
  const row = await drizzle(env.DB)
    .select({ number: issues.number })
    .from(issues)
    .where(and(eq(issues.projectId, projectId), eq(issues.headSha, sha), eq(issues.state, "awaiting_ci")))
    .get();
  return row?.number ?? null;
}

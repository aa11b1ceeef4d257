/** Conveyor's copy of each forge issue (from webhooks and reconciliation), and who depends on whom. */
import { and, eq, inArray, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { compile, rowsOf } from "../db/compiled.ts";
import { deliveries, forgeIssues, issueDependencies, issues } from "../db/schema.ts";
import type { Env } from "../env.ts";
import { deliveryMatch } from "../hooks/deliveries.ts";

export type MirroredIssue = {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  dependsOn: number[];
};

const ph = sql.placeholder;

/** The guard on the mirror write: a delivery already recorded (by row id or content) writes nothing. */
const UNSEEN = sql`NOT EXISTS (SELECT 1 FROM ${deliveries} WHERE ${deliveryMatch})`;

type MirrorValues = {
  projectId: string;
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string;
  dependsOn: string;
  now: number;
  /** Null when no delivery guards the write. */
  deliveryId: string | null;
  contentKey: string | null;
};

const mirrorValues = (
  projectId: string,
  issue: MirroredIssue,
  now: number,
  delivery?: { id: string; contentKey: string },
): MirrorValues => ({
  projectId,
  ...issue,
  labels: JSON.stringify(issue.labels),
  dependsOn: JSON.stringify(issue.dependsOn),
  now,
  deliveryId: delivery?.id ?? null,
  contentKey: delivery?.contentKey ?? null,
});

/** Read before the writes: the issue's lifecycle state (D1 index) and the guarding delivery's outcome. */
const LOOKUP = compile<MirrorValues>(
  () => sql`SELECT
    (SELECT ${issues.state} FROM ${issues} WHERE ${issues.projectId} = ${ph("projectId")}
      AND ${issues.number} = ${ph("number")}) AS state,
    (SELECT ${deliveries.outcome} FROM ${deliveries} WHERE ${deliveryMatch} LIMIT 1) AS seen`,
);

const UPSERT_ISSUE = compile<MirrorValues>((d) =>
  d
    .insert(forgeIssues)
    .select(
      sql`SELECT ${ph("projectId")}, ${ph("number")}, ${ph("title")}, ${ph("body")}, ${ph("state")},
        ${ph("labels")}, ${ph("dependsOn")}, ${ph("now")} WHERE ${UNSEEN}`,
    )
    .onConflictDoUpdate({
      target: [forgeIssues.projectId, forgeIssues.number],
      set: {
        title: sql`excluded.title`,
        body: sql`excluded.body`,
        state: sql`excluded.state`,
        labels: sql`excluded.labels`,
        dependsOn: sql`excluded.depends_on`,
        updatedAt: sql`excluded.updated_at`,
      },
    }),
);

/**
 * Writes the issue in one batch (one transaction) with `also`, reading back the issue's lifecycle state
 * from the D1 index in the same round trip; the reverse dependency index follows by trigger (migration
 * 0004). With `delivery`, the write is skipped when that delivery was already recorded (`seen` is its
 * outcome), so a replayed old delivery cannot roll the mirror back. The statements are compiled once: this
 * runs for every issue webhook.
 */
export async function mirrorIssue(
  env: Env,
  projectId: string,
  issue: MirroredIssue,
  options: { now?: number; delivery?: { id: string; contentKey: string }; also?: D1PreparedStatement[] } = {},
): Promise<{ state: string | undefined; seen: string | undefined }> {
  const { now = Date.now(), delivery, also = [] } = options;
  const values = mirrorValues(projectId, issue, now, delivery);
  const [lookup] = await env.DB.batch([LOOKUP(env.DB, values), UPSERT_ISSUE(env.DB, values), ...also]);
  const [row] = rowsOf<{ state: string | null; seen: string | null }>(lookup);
  return { state: row?.state ?? undefined, seen: row?.seen ?? undefined };
}

/**
 * Writes many issues in one batch (one D1 round trip, one transaction) and reads back each one's lifecycle
 * state: reconciliation's changes of one cycle.
 */
export async function mirrorIssues(
  env: Env,
  projectId: string,
  mirrored: readonly MirroredIssue[],
  now = Date.now(),
): Promise<Map<number, string | undefined>> {
  if (mirrored.length === 0) return new Map();
  const statements = mirrored.flatMap((issue) => {
    const values = mirrorValues(projectId, issue, now);
    return [LOOKUP(env.DB, values), UPSERT_ISSUE(env.DB, values)];
  });
  const results = await env.DB.batch(statements);
  return new Map(
    mirrored.map((issue, i) => {
      const [row] = rowsOf<{ state: string | null }>(results[i * 2] as D1Result);
      return [issue.number, row?.state ?? undefined];
    }),
  );
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

/** The project's open issues, lowest number first: what an agent run is given as its context. */
export async function openMirroredIssues(
  env: Env,
  projectId: string,
  limit: number,
): Promise<MirroredIssue[]> {
  const rows = await drizzle(env.DB)
    .select()
    .from(forgeIssues)
    .where(and(eq(forgeIssues.projectId, projectId), eq(forgeIssues.state, "open")))
    .orderBy(forgeIssues.number)
    .limit(limit)
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

/** The project's dependency graph among open issues, for cycle detection. */
export async function dependencyGraph(env: Env, projectId: string): Promise<Map<number, number[]>> {
  // Only open issues wait: a closed one's declared dependencies are no edge of any cycle.
  const rows = await drizzle(env.DB)
    .select({ dependent: issueDependencies.dependent, dependency: issueDependencies.dependency })
    .from(issueDependencies)
    .innerJoin(
      forgeIssues,
      and(
        eq(forgeIssues.projectId, issueDependencies.projectId),
        eq(forgeIssues.number, issueDependencies.dependent),
      ),
    )
    .where(and(eq(issueDependencies.projectId, projectId), eq(forgeIssues.state, "open")))
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

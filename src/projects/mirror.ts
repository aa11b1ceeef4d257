/**
 * Conveyor's copy of each forge issue and pull request (from the backfill, webhooks and reconciliation), and who
 * depends on whom.
 */
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { compile, rowsOf } from "../db/compiled.ts";
import { deliveries, forgeIssues, issueDependencies, issues } from "../db/schema.ts";
import type { Env } from "../env.ts";
import { deliveryMatch } from "../hooks/deliveries.ts";
import type { MirroredIssue } from "./mirrored-issue.ts";

export type { MirroredIssue } from "./mirrored-issue.ts";

const ph = sql.placeholder;

/** The guard on the mirror write: a delivery already recorded (by row id or content) writes nothing. */
const UNSEEN = sql`NOT EXISTS (SELECT 1 FROM ${deliveries} WHERE ${deliveryMatch})`;

type MirrorValues = {
  projectId: string;
  number: number;
  kind: "issue" | "pull";
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string;
  dependsOn: string;
  closes: string;
  author: string | null;
  comments: number | null;
  createdAt: number | null;
  forgeUpdatedAt: number | null;
  closedAt: number | null;
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
  number: issue.number,
  kind: issue.kind ?? "issue",
  title: issue.title,
  body: issue.body,
  state: issue.state,
  labels: JSON.stringify(issue.labels),
  dependsOn: JSON.stringify(issue.dependsOn),
  closes: JSON.stringify(issue.closes ?? []),
  author: issue.author ?? null,
  comments: issue.comments ?? null,
  createdAt: issue.createdAt ?? null,
  forgeUpdatedAt: issue.forgeUpdatedAt ?? null,
  closedAt: issue.closedAt ?? null,
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

/** What a source does not say is kept: the row's own value (or the column's default for a new row). */
const keep = (column: string) => sql.raw(`COALESCE(excluded.${column}, forge_issues.${column})`);

const UPSERT_ISSUE = compile<MirrorValues>((d) =>
  d
    .insert(forgeIssues)
    .select(
      sql`SELECT ${ph("projectId")}, ${ph("number")}, ${ph("kind")}, ${ph("title")}, ${ph("body")},
        ${ph("state")}, ${ph("labels")}, ${ph("dependsOn")}, ${ph("closes")}, COALESCE(${ph("author")}, ''),
        COALESCE(${ph("comments")}, 0), ${ph("createdAt")}, ${ph("forgeUpdatedAt")}, ${ph("closedAt")},
        ${ph("now")} WHERE ${UNSEEN}`,
    )
    .onConflictDoUpdate({
      target: [forgeIssues.projectId, forgeIssues.number],
      set: {
        kind: sql`excluded.kind`,
        title: sql`excluded.title`,
        body: sql`excluded.body`,
        state: sql`excluded.state`,
        labels: sql`excluded.labels`,
        dependsOn: sql`excluded.depends_on`,
        closes: sql`excluded.closes`,
        author: sql`CASE WHEN ${ph("author")} IS NULL THEN forge_issues.author ELSE excluded.author END`,
        comments: sql`CASE WHEN ${ph("comments")} IS NULL THEN forge_issues.comments ELSE excluded.comments END`,
        createdAt: keep("created_at"),
        forgeUpdatedAt: keep("forge_updated_at"),
        closedAt: sql`CASE WHEN excluded.state = 'open' THEN NULL ELSE ${keep("closed_at")} END`,
        updatedAt: sql`excluded.updated_at`,
      },
      // An answer older than what the mirror holds (a backfill page read before a webhook's change) writes
      // nothing: the forge's own time of the change orders the sources.
      setWhere: sql`excluded.forge_updated_at IS NULL OR forge_issues.forge_updated_at IS NULL
        OR excluded.forge_updated_at >= forge_issues.forge_updated_at`,
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

/** A project's open items an agent run ranks (src/agents/backlog.ts): at most this many, latest changed first. */
export const MAX_BACKLOG_ROWS = 5_000;

/** The project's open issues and pull requests, latest changed on the forge first (undated ones first). */
export async function openBacklog(env: Env, projectId: string): Promise<Required<MirroredIssue>[]> {
  const rows = await drizzle(env.DB)
    .select()
    .from(forgeIssues)
    .where(and(eq(forgeIssues.projectId, projectId), eq(forgeIssues.state, "open")))
    .orderBy(sql`${forgeIssues.forgeUpdatedAt} IS NOT NULL`, desc(forgeIssues.forgeUpdatedAt))
    .limit(MAX_BACKLOG_ROWS)
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

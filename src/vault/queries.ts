/** The vault's D1 read model (written by durable-objects/project/vault.ts): what the API, dashboard and CLI list. */
import { and, asc, desc, eq, type SQL, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { vaultItems } from "../db/schema.ts";
import type { AuditEntry, ClassifierVerdict, Requester, VaultItem, VaultState } from "../domain/vault.ts";
import type { Env } from "../env.ts";

export type VaultItemView = VaultItem & { project: string; updatedAt: number };

const LIMIT = 200;

/**
 * Items of one project (newest first) or, with no project, across projects (oldest first: the queue a human
 * works through, unless `newest` asks for the latest); optionally in one state, or of one issue.
 */
export async function listVaultItems(
  env: Env,
  filter: { project?: string; state?: VaultState; issue?: number; newest?: boolean },
): Promise<VaultItemView[]> {
  const where: SQL[] = [];
  if (filter.project) where.push(eq(vaultItems.projectId, filter.project));
  if (filter.state) where.push(eq(vaultItems.state, filter.state));
  if (filter.issue !== undefined)
    where.push(
      sql`json_extract(${vaultItems.requester}, '$.type') = 'issue'`,
      sql`json_extract(${vaultItems.requester}, '$.issue') = ${filter.issue}`,
    );
  const newest = filter.newest ?? filter.project !== undefined;
  const rows = await drizzle(env.DB)
    .select()
    .from(vaultItems)
    .where(and(...where))
    .orderBy(newest ? desc(vaultItems.createdAt) : asc(vaultItems.createdAt))
    .limit(LIMIT);
  return rows.map((row) => ({
    project: row.projectId,
    id: row.id,
    kind: row.kind,
    requester: JSON.parse(row.requester) as Requester,
    title: row.title,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    verdict: row.verdict ? (JSON.parse(row.verdict) as ClassifierVerdict) : null,
    audit: JSON.parse(row.audit) as AuditEntry[],
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    updatedAt: row.updatedAt,
  }));
}

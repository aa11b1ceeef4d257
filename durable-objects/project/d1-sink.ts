/** Writes a ProjectDO's records to D1: job rows, worker sessions, usage and vault items, each an idempotent upsert. */
import { compileUpsert, type FullRow } from "../../src/db/compiled.ts";
import { jobs, usage, vaultItems, workerSessions } from "../../src/db/schema.ts";

export type JobRecord =
  | { table: "jobs"; row: FullRow<typeof jobs> }
  | { table: "worker_sessions"; row: FullRow<typeof workerSessions> }
  | { table: "usage"; row: FullRow<typeof usage> }
  | { table: "vault_items"; row: FullRow<typeof vaultItems> };

const JOB = compileUpsert(jobs, { target: [jobs.id], update: { except: ["id", "createdAt"] } });
// A resumed session keeps the row it started with; runner, iteration and worktree move on.
const SESSION = compileUpsert(workerSessions, {
  target: [workerSessions.sessionId],
  update: { except: ["sessionId", "startedAt"] },
});
const USAGE = compileUpsert(usage, { target: [usage.id], update: { except: ["id"] } });
const VAULT_ITEM = compileUpsert(vaultItems, {
  target: [vaultItems.projectId, vaultItems.id],
  update: { except: ["projectId", "id", "createdAt"] },
});

export async function writeJobRecords(db: D1Database, records: readonly JobRecord[]): Promise<void> {
  const statements = records.map((record) => statementOf(db, record));
  // One D1 batch is one transaction; the outbox sends records in order, so the last write is the newest.
  if (statements.length > 0) await db.batch(statements);
}

function statementOf(db: D1Database, record: JobRecord): D1PreparedStatement {
  switch (record.table) {
    case "jobs":
      return JOB(db, record.row);
    case "worker_sessions":
      return SESSION(db, record.row);
    case "usage":
      return USAGE(db, record.row);
    case "vault_items":
      return VAULT_ITEM(db, record.row);
  }
}

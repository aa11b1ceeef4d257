/** Writes a ProjectDO's records to D1: job rows, worker sessions and usage, each an idempotent upsert. */
import type { BatchItem } from "drizzle-orm/batch";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import { jobs, usage, workerSessions } from "../src/db/schema.ts";

export type JobRecord =
  | { table: "jobs"; row: typeof jobs.$inferInsert }
  | { table: "worker_sessions"; row: typeof workerSessions.$inferInsert }
  | { table: "usage"; row: typeof usage.$inferInsert };

export async function writeJobRecords(db: D1Database, records: readonly JobRecord[]): Promise<void> {
  const d = drizzle(db);
  const [first, ...rest] = records.map((record) => upsert(d, record));
  if (!first) return;
  // One D1 batch is one transaction; the outbox sends records in order, so the last write is the newest.
  await d.batch([first, ...rest]);
}

function upsert(d: DrizzleD1Database, record: JobRecord): BatchItem<"sqlite"> {
  if (record.table === "jobs") {
    const { id: _id, createdAt: _c, ...set } = record.row;
    return d.insert(jobs).values(record.row).onConflictDoUpdate({ target: jobs.id, set });
  }
  if (record.table === "worker_sessions") {
    // A resumed session keeps the row it started with; runner, iteration and worktree move on.
    const { sessionId: _s, startedAt: _st, ...set } = record.row;
    return d
      .insert(workerSessions)
      .values(record.row)
      .onConflictDoUpdate({ target: workerSessions.sessionId, set });
  }
  const { id: _id, ...set } = record.row;
  return d.insert(usage).values(record.row).onConflictDoUpdate({ target: usage.id, set });
}

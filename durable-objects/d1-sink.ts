/** Writes an IssueDO's records to D1 idempotently, so a retried batch never doubles an edge. */
import { sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { drizzle } from "drizzle-orm/d1";
import { issues, transitions } from "../src/db/schema.ts";
import { type DeliveryRow, upsertDelivery } from "../src/hooks/deliveries.ts";

export type D1Record = {
  transition: typeof transitions.$inferInsert;
  /** The issue's index row as of this edge; absent for a rejected event. */
  issue?: typeof issues.$inferInsert;
  /** The webhook delivery the edge's event finished. */
  delivery?: DeliveryRow;
};

export async function writeRecords(db: D1Database, records: readonly D1Record[]): Promise<void> {
  const d = drizzle(db);
  const statements: BatchItem<"sqlite">[] = [];
  for (const record of records) {
    statements.push(d.insert(transitions).values(record.transition).onConflictDoNothing());
    if (record.issue) {
      const { projectId: _p, number: _n, ...fields } = record.issue;
      statements.push(
        d
          .insert(issues)
          .values(record.issue)
          .onConflictDoUpdate({
            target: [issues.projectId, issues.number],
            set: fields,
            // Batches may be retried out of order; only a newer edge moves the index.
            setWhere: sql`excluded.seq > ${issues.seq}`,
          }),
      );
    }
    if (record.delivery) statements.push(upsertDelivery(d, record.delivery));
  }
  const [first, ...rest] = statements;
  if (!first) return;
  // One D1 batch is one transaction: all of it lands or none of it does.
  await d.batch([first, ...rest]);
}

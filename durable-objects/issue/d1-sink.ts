/** Writes an IssueDO's records to D1 idempotently, so a retried batch never doubles an edge. */
import { sql } from "drizzle-orm";
import { compileUpsert, type FullRow } from "../../src/db/compiled.ts";
import { issues, transitions } from "../../src/db/schema.ts";
import { type DeliveryRow, writeDelivery } from "../../src/hooks/deliveries.ts";

export type D1Record = {
  transition: FullRow<typeof transitions>;
  /** The issue's index row as of this edge; absent for a rejected event. */
  issue?: FullRow<typeof issues>;
  /** The webhook delivery the edge's event finished. */
  delivery?: DeliveryRow;
};

const TRANSITION = compileUpsert(transitions);
const ISSUE = compileUpsert(issues, {
  target: [issues.projectId, issues.number],
  update: { except: ["projectId", "number"] },
  // Batches may be retried out of order; only a newer edge moves the index.
  where: sql`excluded.seq > ${issues.seq}`,
});

export async function writeRecords(db: D1Database, records: readonly D1Record[]): Promise<void> {
  const statements = records.flatMap((record) => [
    TRANSITION(db, record.transition),
    ...(record.issue ? [ISSUE(db, record.issue)] : []),
    ...(record.delivery ? [writeDelivery(db, record.delivery)] : []),
  ]);
  // One D1 batch is one transaction: all of it lands or none of it does.
  if (statements.length > 0) await db.batch(statements);
}

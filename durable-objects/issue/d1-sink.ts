/** Writes an IssueDO's records to D1 idempotently, so a retried batch never doubles an edge. */
import { sql } from "drizzle-orm";
import { compileUpsert, type FullRow } from "../../src/db/compiled.ts";
import { ciReruns, issues, transitions } from "../../src/db/schema.ts";
import { type DeliveryRow, writeDelivery } from "../../src/hooks/deliveries.ts";

export type D1Record = {
  transition: FullRow<typeof transitions>;
  /** The issue's index row as of this edge; absent for a rejected event. */
  issue?: FullRow<typeof issues>;
  /** The webhook delivery the edge's event finished. */
  delivery?: DeliveryRow;
  /** The checks a CI re-run of the edge asked for, or the result of the re-run it answered. */
  ciReruns?: FullRow<typeof ciReruns>[];
};

const TRANSITION = compileUpsert(transitions);
const ISSUE = compileUpsert(issues, {
  target: [issues.projectId, issues.number],
  update: { except: ["projectId", "number"] },
  // Batches may be retried out of order; only a newer edge moves the index.
  where: sql`excluded.seq > ${issues.seq}`,
});

// A re-run asked for is written once; its result fills in the row.
const RERUN = compileUpsert(ciReruns);
const RERUN_RESULT = compileUpsert(ciReruns, {
  target: [ciReruns.projectId, ciReruns.number, ciReruns.headSha, ciReruns.round, ciReruns.checkName],
  update: ["result", "settledAt"],
});

export async function writeRecords(db: D1Database, records: readonly D1Record[]): Promise<void> {
  const statements = records.flatMap((record) => [
    TRANSITION(db, record.transition),
    ...(record.issue ? [ISSUE(db, record.issue)] : []),
    ...(record.delivery ? [writeDelivery(db, record.delivery)] : []),
    ...(record.ciReruns ?? []).map((row) => (row.result === null ? RERUN : RERUN_RESULT)(db, row)),
  ]);
  // One D1 batch is one transaction: all of it lands or none of it does.
  if (statements.length > 0) await db.batch(statements);
}

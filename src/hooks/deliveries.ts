/** The D1 record of webhook deliveries: dedupe by delivery id and by content, and what became of each. */
import { and, eq, or, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { deliveries } from "../db/schema.ts";
import type { Env } from "../env.ts";

export type DeliveryOutcome = "processed" | "ignored";

export type DeliveryRecord = {
  projectId: string;
  deliveryId: string;
  contentKey: string;
  event: string;
  number: number | null;
};

/** A finished delivery with this id or this content, if any (a query to run or to batch). */
export function finishedQuery(env: Env, record: DeliveryRecord) {
  return drizzle(env.DB)
    .select({ id: deliveries.id, outcome: deliveries.outcome })
    .from(deliveries)
    .where(
      and(
        eq(deliveries.projectId, record.projectId),
        or(eq(deliveries.id, rowId(record)), eq(deliveries.contentKey, record.contentKey)),
      ),
    )
    .limit(1);
}

export async function findFinished(env: Env, record: DeliveryRecord) {
  return (await finishedQuery(env, record))[0] ?? null;
}

/** The same test as an SQL condition, to guard writes a seen delivery must not repeat. */
export const deliverySeen = (record: DeliveryRecord) =>
  sql`EXISTS (SELECT 1 FROM deliveries WHERE project_id = ${record.projectId}
    AND (id = ${rowId(record)} OR content_key = ${record.contentKey}))`;

/** The statement that records a finished delivery, for a caller to batch with its own writes. */
export function deliveryWrite(env: Env, record: DeliveryRecord, outcome: DeliveryOutcome) {
  const row = {
    id: rowId(record),
    projectId: record.projectId,
    contentKey: record.contentKey,
    event: record.event,
    number: record.number,
    outcome,
    receivedAt: Date.now(),
  };
  return (
    drizzle(env.DB)
      .insert(deliveries)
      .values(row)
      // Keyed by content: a replay under a new delivery id finishes the row of the first arrival.
      .onConflictDoUpdate({ target: [deliveries.projectId, deliveries.contentKey], set: { outcome } })
  );
}

export async function recordDelivery(env: Env, record: DeliveryRecord, outcome: DeliveryOutcome) {
  await deliveryWrite(env, record, outcome);
}

/** Delivery ids are unique per forge, not across projects. */
const rowId = (record: DeliveryRecord) => `${record.projectId}:${record.deliveryId}`;

/** The D1 record of webhook deliveries: dedupe by delivery id and by content, and what became of each. */
import { sql } from "drizzle-orm";
import { compile, compileUpsert, type FullRow } from "../db/compiled.ts";
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

/**
 * A recorded delivery of the placeholder `projectId` with the row id `deliveryId` or the content `contentKey`
 * (a null one matches nothing): what makes a delivery a duplicate, for every statement that asks.
 */
export const deliveryMatch = sql`${deliveries.projectId} = ${sql.placeholder("projectId")}
  AND (${deliveries.id} = ${sql.placeholder("deliveryId")} OR ${deliveries.contentKey} = ${sql.placeholder("contentKey")})`;

const FINISHED = compile<{ projectId: string; deliveryId: string; contentKey: string }>((d) =>
  d.select({ id: deliveries.id, outcome: deliveries.outcome }).from(deliveries).where(deliveryMatch).limit(1),
);

export type DeliveryRow = FullRow<typeof deliveries>;

/** Keyed by content: a replay under a new delivery id finishes the row of the first arrival. */
export const writeDelivery = compileUpsert(deliveries, {
  target: [deliveries.projectId, deliveries.contentKey],
  update: ["outcome"],
  // A redelivery changes nothing, so its batch writes no page.
  where: sql`excluded.outcome IS NOT ${deliveries.outcome}`,
});

/** A finished delivery with this id or this content, if any. */
export async function findFinished(env: Env, record: DeliveryRecord) {
  const { id, contentKey } = deliveryKeys(record);
  return FINISHED(env.DB, { projectId: record.projectId, deliveryId: id, contentKey }).first<{
    id: string;
    outcome: DeliveryOutcome;
  }>();
}

/** The statement that records a finished delivery, for a caller to batch with its own writes. */
export const deliveryWrite = (env: Env, record: DeliveryRecord, outcome: DeliveryOutcome) =>
  writeDelivery(env.DB, {
    ...deliveryKeys(record),
    projectId: record.projectId,
    event: record.event,
    number: record.number,
    outcome,
    receivedAt: Date.now(),
  });

export async function recordDelivery(env: Env, record: DeliveryRecord, outcome: DeliveryOutcome) {
  await deliveryWrite(env, record, outcome).run();
}

/**
 * The delivery's row id and content key: what a seen delivery is recognised by. Delivery ids are unique per
 * forge, not across projects.
 */
export const deliveryKeys = (record: DeliveryRecord) => ({
  id: `${record.projectId}:${record.deliveryId}`,
  contentKey: record.contentKey,
});

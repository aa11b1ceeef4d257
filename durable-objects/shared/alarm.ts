/**
 * The one alarm a Durable Object has, shared by its timers and its outbox. Rows written by a call are
 * delivered at once in the background; the alarm is then only the safety net for a delivery that dies with
 * the object, so it is armed a little later instead of firing beside that delivery.
 */

/** How far behind a delivery started at once the safety-net alarm is armed. */
export const SAFETY_NET_MS = 5_000;

/** Arms the alarm for the earliest of `times` (absent ones ignored), or clears it when none is left. */
export async function armAlarm(
  storage: DurableObjectStorage,
  times: readonly (number | null | undefined)[],
): Promise<void> {
  const due = times.filter((t): t is number => typeof t === "number");
  const next = due.length === 0 ? null : Math.min(...due);
  if ((await storage.getAlarm()) === next) return;
  if (next === null) await storage.deleteAlarm();
  else await storage.setAlarm(next);
}

/** When the outbox next needs the alarm: its earliest row, but not before `floor` (the safety net). */
export const outboxAlarm = (nextAt: number | null, floor?: number): number | null =>
  nextAt === null || floor === undefined ? nextAt : Math.max(nextAt, floor);

/**
 * After a call wrote outbox rows: arms the safety net, then delivers in the background and re-arms the alarm
 * for whatever that delivery leaves (a retry's backoff, or nothing).
 */
export async function deliverSoon(
  ctx: DurableObjectState,
  schedule: (floor?: number) => Promise<void>,
  flush: () => Promise<void>,
): Promise<void> {
  await schedule(Date.now() + SAFETY_NET_MS);
  ctx.waitUntil(flush().then(() => schedule()));
}

/**
 * The supervisor's share of the operator's channel (docs/supervisor.md#the-operator-channel): after a check
 * that changed which of its findings alert (P0, P1, and every runner finding), the project's whole set goes to
 * the factory's AlertDO, from the object's outbox, so it arrives however often delivery is retried; sent in
 * order, the last set sent is the one that stands. The AlertDO tells the operator once per alert, however many
 * projects report it.
 */
import { alertStub } from "../../../src/alert-stub.ts";
import { type SourceReport, supervisorAlerts, supervisorSource } from "../../../src/domain/alerts.ts";
import type { Finding } from "../../../src/domain/supervisor.ts";
import type { Env } from "../../../src/env.ts";
import { deliverInOrder, type Outbox } from "../../shared/outbox.ts";

/** The outbox channel of the reports to the AlertDO. */
export const ALERTS_CHANNEL = "supervisor_alerts";

/** Queues the project's alerts when the check changed them. In the caller's transaction. */
export function queueAlerts(
  outbox: Outbox,
  project: string,
  before: readonly Finding[],
  after: readonly Finding[],
  now: number,
): void {
  const alerts = supervisorAlerts(project, after);
  const keys = (list: { key: string }[]) =>
    list
      .map((a) => a.key)
      .sort()
      .join("\n");
  if (keys(alerts) === keys(supervisorAlerts(project, before))) return;
  const report: SourceReport = { source: supervisorSource(project), alerts };
  outbox.enqueue(ALERTS_CHANNEL, report, now);
}

/** Sends the queued reports in order; a failure backs off (the alarm comes back for it). */
export function deliverAlerts(
  storage: DurableObjectStorage,
  outbox: Outbox,
  env: Env,
  horizon?: number,
): Promise<void> {
  return deliverInOrder(
    storage,
    outbox,
    [ALERTS_CHANNEL],
    10,
    async (rows) => {
      await alertStub(env).report(rows.map((row) => JSON.parse(row.payload) as SourceReport));
    },
    horizon,
  );
}

/**
 * A webhook event as an agent trigger: the project's Durable Object queues one run of each repository agent
 * whose `on` names the event (durable-objects/project/agents/triggers.ts). Asked after the content dedupe (a
 * delivery seen before, under any delivery id, is `duplicate` and starts nothing) and before the event is
 * routed, so a redelivery after a crash still asks (the run id, keyed by the delivery's content, queues it
 * once); a failure here (the catalog unreadable) is logged and never holds up the lifecycle.
 */
import { agentTriggerOf } from "../agents/triggers.ts";
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import type { ForgeEvent } from "../forge/webhooks/events.ts";
import { log } from "../log.ts";
import { projectStub } from "../project-stub.ts";
import type { Project } from "../projects/store.ts";
import { type DeliveryOutcome, type DeliveryRecord, findFinished } from "./deliveries.ts";

export async function routeAgents(
  env: Env,
  project: Project,
  event: ForgeEvent,
  record: DeliveryRecord,
): Promise<{ runs: string[]; deduped: boolean } | { duplicate: DeliveryOutcome }> {
  const trigger = agentTriggerOf(event);
  if (!trigger) return { runs: [], deduped: false };
  const finished = await findFinished(env, record);
  if (finished) return { duplicate: finished.outcome };
  const outcome = await projectStub(env, project.id)
    .triggerAgents(project, trigger, record.contentKey)
    .catch((error: unknown) => ({ error: errorMessage(error) }));
  if ("queued" in outcome) return { runs: outcome.queued, deduped: true };
  log.warn("agents not triggered", {
    project: project.id,
    deliveryId: record.deliveryId,
    reason: outcome.error,
  });
  return { runs: [], deduped: true };
}

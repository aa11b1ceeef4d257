/**
 * A webhook event as an agent trigger: the project's Durable Object queues one run of each repository agent
 * whose `on` names the event (durable-objects/project/agents/triggers.ts). Asked before the event is routed, so a
 * redelivery after a crash still asks (the run id, keyed by the delivery, queues it once); a failure here
 * (the catalog unreadable) is logged and never holds up the lifecycle.
 */
import { agentTriggerOf } from "../agents/triggers.ts";
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import type { ForgeEvent } from "../forge/webhooks/events.ts";
import { log } from "../log.ts";
import { projectStub } from "../project-stub.ts";
import type { Project } from "../projects/store.ts";

export async function routeAgents(
  env: Env,
  project: Project,
  event: ForgeEvent,
  deliveryId: string,
): Promise<string[]> {
  const trigger = agentTriggerOf(event);
  if (!trigger) return [];
  const outcome = await projectStub(env, project.id)
    .triggerAgents(project, trigger, deliveryId)
    .catch((error: unknown) => ({ error: errorMessage(error) }));
  if ("queued" in outcome) return outcome.queued;
  log.warn("agents not triggered", { project: project.id, deliveryId, reason: outcome.error });
  return [];
}

/**
 * Sends lifecycle events to an issue's Durable Object with the project's current caps. With `delivery`, the
 * webhook delivery this event finishes is recorded by the DO, in D1 with the event's edge.
 */
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { CauseKind, EventEnvelope } from "../issue-events.ts";
import { issueStub } from "../issue-stub.ts";
import type { ProjectSettings } from "./config.ts";
import type { Project } from "./store.ts";

export type Cause = { kind: CauseKind; id: string };

/** What an event carries of the project's settings: the caps the issue's object applies with it. */
export function limitsOf(settings: ProjectSettings): EventEnvelope["limits"] {
  const { maxCiFixes, maxCriticIterations, maxHumanRounds, maxUpdates, effects, retentionDays, ci } =
    settings;
  return {
    maxCiFixes,
    ciReruns: ci.reruns,
    maxCriticIterations,
    maxHumanRounds,
    maxUpdates,
    maxEffectAttempts: effects.maxAttempts,
    pollMaxMs: effects.pollMaxMs,
    effectRetryBaseMs: effects.retryBaseMs,
    retentionDays,
  };
}

export async function sendEvent(
  env: Env,
  project: Project,
  number: number,
  id: string,
  cause: Cause,
  event: LifecycleEvent,
  delivery?: EventEnvelope["delivery"],
) {
  const result = await issueStub(env, project.id, number).apply({
    id,
    project: project.id,
    number,
    cause,
    event,
    limits: limitsOf(project.settings),
    timeouts: project.settings.timeouts,
    ...(delivery && { delivery }),
  });
  if (result.outcome === "invalid") throw new Error(`lifecycle event refused: ${result.reason}`);
  return result;
}

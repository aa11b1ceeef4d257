/**
 * Sends lifecycle events to an issue's Durable Object with the project's current caps. With `delivery`, the
 * webhook delivery this event finishes is recorded by the DO, in D1 with the event's edge.
 */
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { CauseKind, EventEnvelope } from "../issue-events.ts";
import { issueStub } from "../issue-stub.ts";
import type { Project } from "./store.ts";

export type Cause = { kind: CauseKind; id: string };

export async function sendEvent(
  env: Env,
  project: Project,
  number: number,
  id: string,
  cause: Cause,
  event: LifecycleEvent,
  delivery?: EventEnvelope["delivery"],
) {
  const {
    maxCiFixes,
    maxCriticIterations,
    maxHumanRounds,
    maxUpdates,
    effects,
    timeouts,
    retentionDays,
    ci,
  } = project.settings;
  const result = await issueStub(env, project.id, number).apply({
    id,
    project: project.id,
    number,
    cause,
    event,
    limits: {
      maxCiFixes,
      ciReruns: ci.reruns,
      maxCriticIterations,
      maxHumanRounds,
      maxUpdates,
      maxEffectAttempts: effects.maxAttempts,
      pollMaxMs: effects.pollMaxMs,
      effectRetryBaseMs: effects.retryBaseMs,
      retentionDays,
    },
    timeouts,
    ...(delivery && { delivery }),
  });
  if (result.outcome === "invalid") throw new Error(`lifecycle event refused: ${result.reason}`);
  return result;
}

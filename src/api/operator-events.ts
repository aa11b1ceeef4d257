/** Lifecycle events from an operator, whether sent through the API, the dashboard or the CLI: one path. */
import type { ApplyResult } from "../contracts/issue-object.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import { issueStub } from "../issue-stub.ts";
import { loadProject } from "../projects/store.ts";

/** An event for a project Conveyor does not know: nothing is recorded anywhere. */
export type Unregistered = { duplicate: false; outcome: "unregistered"; reason: string };

export const unregisteredReason = (project: string) =>
  `project ${project} is not registered (conveyor project add ${project})`;

/**
 * Applies `event` to the issue as the operator; the same `id` applies at most once. An unregistered project
 * is refused before its issue's Durable Object is touched: an issue queued there would run effects that
 * fail forever for want of a forge.
 */
export async function applyOperatorEvent(
  env: Env,
  project: string,
  number: number,
  event: LifecycleEvent,
  id = `operator:${crypto.randomUUID()}`,
): Promise<ApplyResult | Unregistered> {
  // Read from D1, not the per-isolate cache: an operator who just registered the project expects it known.
  if (!(await loadProject(env, project)))
    return { duplicate: false, outcome: "unregistered", reason: unregisteredReason(project) };
  return issueStub(env, project, number).apply({
    id,
    project,
    number,
    cause: { kind: "operator", id },
    event,
  });
}

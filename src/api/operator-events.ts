/** Lifecycle events from an operator, whether sent through the API, the dashboard or the CLI: one path. */
import type { ApplyResult } from "../../durable-objects/issue-do.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import { issueStub } from "../issue-stub.ts";

/** Applies `event` to the issue as the operator; the same `id` applies at most once. */
export function applyOperatorEvent(
  env: Env,
  project: string,
  number: number,
  event: LifecycleEvent,
  id = `operator:${crypto.randomUUID()}`,
): Promise<ApplyResult> {
  return issueStub(env, project, number).apply({
    id,
    project,
    number,
    cause: { kind: "operator", id },
    event,
  });
}

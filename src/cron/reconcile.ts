/**
 * The cron trigger's whole share of reconciliation: make sure every registered project's Durable Object has
 * its reconciliation alarm armed. Each ProjectDO then reconciles its own project on its own period
 * (durable-objects/project/reconciliation.ts), so a slow or failing forge holds up only its own project, and this
 * invocation costs one call per project, whatever the projects hold.
 */

import { armingTurn } from "../domain/reconciliation.ts";
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import { projectStub } from "../project-stub.ts";
import { listProjects } from "../projects/store.ts";

export type ArmReport = { project: string; nextAt?: number; error?: string };

export async function armReconciliation(env: Env, now = Date.now()): Promise<ArmReport[]> {
  const projects = armingTurn(await listProjects(env), Math.floor(now / 60_000));
  return Promise.all(
    projects.map(async ({ id }): Promise<ArmReport> => {
      try {
        return { project: id, nextAt: await projectStub(env, id).armReconciliation(id) };
      } catch (error) {
        return { project: id, error: errorMessage(error) };
      }
    }),
  );
}

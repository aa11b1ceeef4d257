/**
 * A runner's claim across projects: claim from each ProjectDO in turn without waiting; if none has a job for
 * this runner, wait until one has and go round again. Only a call that hands back its lease takes one, so a
 * runner that hangs up mid-poll never leaves a job leased to nobody until its lease expires.
 */
import { drizzle } from "drizzle-orm/d1";
import { projects } from "../db/schema.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import type { Claim } from "./contract.ts";

export async function claimAcross(
  env: Env,
  runnerId: string,
  holding: readonly string[],
  only: readonly string[] | undefined,
  waitMs: number,
): Promise<Claim | null> {
  const deadline = Date.now() + waitMs;
  const order = claimOrder(only ?? (await registeredProjects(env)), holding);
  for (;;) {
    for (const project of order) {
      const claim = await projectStub(env, project).claim(runnerId, holding, 0);
      if (claim) return claim;
    }
    const left = deadline - Date.now();
    if (left <= 0) return null;
    if (order.length === 0) {
      // Nothing to wait on: hold the poll anyway, so an idle runner does not spin.
      await new Promise((resolve) => setTimeout(resolve, left));
      return null;
    }
    const woken = await Promise.race(
      order.map((project) => projectStub(env, project).waitForJob(runnerId, holding, left)),
    );
    if (!woken) return null;
  }
}

async function registeredProjects(env: Env): Promise<string[]> {
  const rows = await drizzle(env.DB).select({ id: projects.id }).from(projects);
  return rows.map((r) => r.id);
}

/**
 * Projects where the runner holds worktrees first (their continuations wait for it), the rest from a random
 * start so that runners spread over projects instead of all draining the first.
 */
function claimOrder(all: readonly string[], holding: readonly string[]): string[] {
  const held = new Set(holding.map((ref) => ref.slice(0, ref.lastIndexOf("#"))));
  const start = Math.floor(Math.random() * all.length);
  const rotated = [...all.slice(start), ...all.slice(0, start)];
  return [...rotated.filter((p) => held.has(p)), ...rotated.filter((p) => !held.has(p))];
}

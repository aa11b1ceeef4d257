/**
 * A runner's claim across projects: claim from each ProjectDO in turn without waiting; if none has a job for
 * this runner, wait until one has (or `waitMs` passes) and answer nothing: the runner claims again at once,
 * and that claim takes the job. Only a request that finds a job as it arrives leases it, never one that waited:
 * a runner killed while its long-poll waited is not handed the next job even where its hang-up never reaches
 * the Worker (wrangler dev's proxy does not pass it on). Where it does (`hungUp`, the request's signal), it is
 * checked before every lease too. What is left (a runner killed while the answer is on its way) is a lease
 * nobody confirms: the ProjectDO takes it back after `jobs.confirmMs`, at no cost to the job. All D1 reads
 * happen before any lease is taken.
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
  hungUp?: AbortSignal,
): Promise<Claim | null> {
  const order = claimOrder(only ?? (await registeredProjects(env)), holding);
  for (const project of order) {
    if (hungUp?.aborted) return null;
    const claim = await projectStub(env, project).claim(runnerId, holding, 0);
    if (claim) return claim;
  }
  if (waitMs <= 0 || hungUp?.aborted) return null;
  // Nothing to wait on (no project): hold the poll anyway, so an idle runner does not spin.
  const waits =
    order.length === 0
      ? [sleep(waitMs)]
      : order.map((project) => projectStub(env, project).waitForJob(runnerId, holding, waitMs));
  await Promise.race<unknown>([...waits, ...(hungUp ? [abortOf(hungUp)] : [])]);
  return null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves false when `signal` aborts (never rejects). */
const abortOf = (signal: AbortSignal) =>
  new Promise<false>((resolve) => {
    if (signal.aborted) resolve(false);
    else signal.addEventListener("abort", () => resolve(false), { once: true });
  });

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

/**
 * Revoking a runner: its row goes, and with it both its tokens, so its every call answers 401. The jobs it
 * holds are requeued at once (attempt + 1, for any runner) rather than when their leases would expire.
 */
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { jobs, projects } from "../db/schema.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import { deleteRunner } from "./registry.ts";

/** False when there is no such runner. */
export async function revokeRunner(env: Env, runnerId: string): Promise<boolean> {
  if (!(await deleteRunner(env, runnerId))) return false;
  const swept = await projectsToSweep(env, runnerId);
  await Promise.all(swept.map((project) => projectStub(env, project).dropRunner(runnerId)));
  return true;
}

/**
 * Every registered project, and any other that D1 records a lease of the runner in. D1's job rows lag the
 * queue by about a second, so a lease taken just now is found by asking every registered project's queue.
 */
async function projectsToSweep(env: Env, runnerId: string): Promise<string[]> {
  const d = drizzle(env.DB);
  const [registered, leased] = await d.batch([
    d.select({ id: projects.id }).from(projects),
    d
      .selectDistinct({ id: jobs.projectId })
      .from(jobs)
      .where(and(eq(jobs.status, "leased"), eq(jobs.runnerId, runnerId))),
  ]);
  return [...new Set([...registered, ...leased].map((row) => row.id))];
}

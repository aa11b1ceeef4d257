/**
 * Retention, from the cron: a project's webhook deliveries and lifecycle transitions older than its
 * `retentionDays` are deleted from D1, and runner registration tokens a day after they expired. (Each IssueDO prunes its own history: durable-objects/issue/retention.ts.) A delivery forgotten
 * this way can no longer be recognised as a duplicate; no forge redelivers one that old.
 */
import { and, eq, lt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { deliveries, registrationTokens, transitions } from "../db/schema.ts";
import type { Env } from "../env.ts";
import type { Project } from "../projects/store.ts";

const DAY_MS = 24 * 60 * 60_000;

export const retentionCutoff = (retentionDays: number, now: number) => now - retentionDays * DAY_MS;

export async function pruneProject(env: Env, project: Project, now: number): Promise<void> {
  const before = retentionCutoff(project.settings.retentionDays, now);
  const db = drizzle(env.DB);
  await db.batch([
    db.delete(deliveries).where(and(eq(deliveries.projectId, project.id), lt(deliveries.receivedAt, before))),
    db.delete(transitions).where(and(eq(transitions.projectId, project.id), lt(transitions.at, before))),
  ]);
}

/** Registration tokens are single-use and short-lived: a day after they expired, they are dropped. */
export async function pruneRegistrationTokens(env: Env, now: number): Promise<void> {
  await drizzle(env.DB)
    .delete(registrationTokens)
    .where(lt(registrationTokens.expiresAt, now - DAY_MS));
}

export async function pruneAll(env: Env, projects: readonly Project[], now = Date.now()): Promise<void> {
  for (const project of projects) await pruneProject(env, project, now);
  await pruneRegistrationTokens(env, now);
}

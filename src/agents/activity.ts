/**
 * Recent activity of a project's issues, for an agent's prompt (the predictor reads it for staleness and
 * regressions): the lifecycle edges D1 recorded, newest first, bounded in age and count.
 */
import { and, desc, eq, gte } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { transitions } from "../db/schema.ts";
import type { Env } from "../env.ts";
import type { ActivityEntry } from "./context.ts";

export const ACTIVITY_DAYS = 7;
export const MAX_ACTIVITY = 100;

export async function recentActivity(env: Env, projectId: string, now: number): Promise<ActivityEntry[]> {
  const rows = await drizzle(env.DB)
    .select({
      number: transitions.number,
      from: transitions.fromState,
      to: transitions.toState,
      event: transitions.event,
      reason: transitions.reason,
      at: transitions.at,
    })
    .from(transitions)
    .where(
      and(
        eq(transitions.projectId, projectId),
        eq(transitions.outcome, "applied"),
        gte(transitions.at, now - ACTIVITY_DAYS * 24 * 60 * 60_000),
      ),
    )
    .orderBy(desc(transitions.at))
    .limit(MAX_ACTIVITY)
    .all();
  return rows.map(({ at, reason, ...row }) => ({
    ...row,
    ...(reason && { reason }),
    at: new Date(at).toISOString(),
  }));
}

/**
 * A project's prompt-cache lifetime as its jobs carry it: the setting, with `auto` decided from the project's
 * recent CI waits in D1's history (src/domain/prompt-cache.ts). Kept per isolate for ten minutes: a CI's
 * typical duration changes slowly, and enqueueing a job should not cost a D1 read.
 */
import { type PromptCacheTtl, promptCacheTtl } from "../domain/prompt-cache.ts";
import type { Env } from "../env.ts";
import { IsolateCache } from "../isolate-cache.ts";
import type { Project } from "./store.ts";

const TTL_MS = 10 * 60_000;
/** The CI waits read: the project's latest, within the last 30 days. */
const SAMPLES = 20;
const WINDOW_MS = 30 * 24 * 60 * 60_000;

// Only a lifetime already decided is shared (src/isolate-cache.ts): no object awaits another's D1 read.
const cache = new IsolateCache<PromptCacheTtl>();

export async function projectCacheTtl(env: Env, project: Project, now = Date.now()): Promise<PromptCacheTtl> {
  const setting = project.settings.promptCache;
  if (setting !== "auto") return setting;
  const load = async () => promptCacheTtl("auto", await recentCiWaitsMs(env, project.id, now));
  // A failed read is not remembered; the job goes with the API's default.
  return cache.get(project.id, load, ({ at }) => now - at < TTL_MS, now).catch(() => "5m" as const);
}

/**
 * How long the project's latest CI results took: from the edge into `awaiting_ci` to the `ci` event that left
 * it (over the history's primary key and `transitions_by_project_time`).
 */
export async function recentCiWaitsMs(env: Env, projectId: string, now: number): Promise<number[]> {
  const { results } = await env.DB.prepare(
    `SELECT t.at - (SELECT MAX(p.at) FROM transitions p
                     WHERE p.project_id = t.project_id AND p.number = t.number AND p.seq < t.seq
                       AND p.to_state = 'awaiting_ci' AND p.outcome = 'applied') AS waited
       FROM transitions t
      WHERE t.project_id = ?1 AND t.at >= ?2 AND t.outcome = 'applied'
        AND t.from_state = 'awaiting_ci' AND t.event = 'ci'
      ORDER BY t.at DESC LIMIT ?3`,
  )
    .bind(projectId, now - WINDOW_MS, SAMPLES)
    .all<{ waited: number | null }>();
  return results.flatMap((row) => (row.waited === null ? [] : [row.waited]));
}

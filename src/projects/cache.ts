/**
 * Registered projects, cached per isolate for a few seconds with their secrets once opened: every webhook
 * needs both and every enqueued job the project, and a D1 read plus a decryption per delivery would dominate
 * ingestion. A registry change reaches every isolate within the TTL. Only a loaded project is shared, never
 * its read in flight (src/isolate-cache.ts): an IssueDO does not await another object's D1 read.
 */
import type { Env } from "../env.ts";
import { IsolateCache } from "../isolate-cache.ts";
import { loadRegistered, type Registered } from "./store.ts";

export const PROJECT_CACHE_TTL_MS = 5_000;

const cache = new IsolateCache<Registered | null>();

export function cachedProject(env: Env, id: string, now = Date.now()): Promise<Registered | null> {
  return cache.get(
    id,
    () => loadRegistered(env, id),
    ({ at }) => now - at < PROJECT_CACHE_TTL_MS,
    now,
  );
}

/** This isolate's registry writes take effect at once here (others within the TTL). */
export function forgetProject(id: string): void {
  cache.delete(id);
}

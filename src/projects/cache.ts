/**
 * Registered projects, cached per isolate for a few seconds with their secrets once opened: every webhook
 * needs both and every enqueued job the project, and a D1 read plus a decryption per delivery would dominate
 * ingestion. A registry change reaches every isolate within the TTL.
 */
import type { Env } from "../env.ts";
import { loadRegistered, type Registered } from "./store.ts";

export const PROJECT_CACHE_TTL_MS = 5_000;

type Entry = { at: number; value: Promise<Registered | null> };
const cache = new Map<string, Entry>();

export function cachedProject(env: Env, id: string, now = Date.now()) {
  const hit = cache.get(id);
  if (hit && now - hit.at < PROJECT_CACHE_TTL_MS) return hit.value;
  const value = loadRegistered(env, id);
  // A failed read is not remembered.
  value.catch(() => cache.delete(id));
  cache.set(id, { at: now, value });
  return value;
}

/** This isolate's registry writes take effect at once here (others within the TTL). */
export function forgetProject(id: string): void {
  cache.delete(id);
}

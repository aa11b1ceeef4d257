/**
 * Runners in D1: one-time registration tokens and per-runner tokens, both stored as their SHA-256 only, and
 * when each runner was last seen.
 */
import { and, eq, lt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { randomToken, sha256Hex } from "../crypto/tokens.ts";
import { jobs, registrationTokens, runners } from "../db/schema.ts";
import type { Env } from "../env.ts";
import type { SANDBOX_MODES } from "./contract.ts";

type SandboxMode = (typeof SANDBOX_MODES)[number];

/** Prefixes that secret scanners and log redaction recognise. */
export const TOKEN_PREFIXES = { registration: "cvreg_", runner: "cvr_" } as const;

/** Last-seen times are this coarse, so a busy runner does not write to D1 on every call. */
const SEEN_RESOLUTION_MS = 30_000;

export async function createRegistrationToken(env: Env, ttlMs: number) {
  const token = randomToken(TOKEN_PREFIXES.registration);
  const now = Date.now();
  const expiresAt = now + ttlMs;
  await drizzle(env.DB)
    .insert(registrationTokens)
    .values({ tokenHash: await sha256Hex(token), createdAt: now, expiresAt });
  return { token, expiresAt };
}

/** Spends a registration token on a new runner; an unknown, used or expired token registers nothing. */
export async function registerRunner(
  env: Env,
  request: { registrationToken: string; name: string; version: string; sandbox?: SandboxMode | undefined },
): Promise<{ runnerId: string; token: string } | null> {
  const runnerId = `runner-${randomToken("", 8)}`;
  const token = randomToken(TOKEN_PREFIXES.runner);
  const now = Date.now();
  const [registrationHash, tokenHash] = await Promise.all([
    sha256Hex(request.registrationToken),
    sha256Hex(token),
  ]);
  // One batch is one transaction: the token is spent if and only if the runner is created, and of two
  // registrations racing for one token only the one whose mark stuck inserts a runner.
  const [, inserted] = await env.DB.batch([
    env.DB.prepare(
      "UPDATE registration_tokens SET used_by = ?1 WHERE token_hash = ?2 AND used_by IS NULL AND expires_at > ?3",
    ).bind(runnerId, registrationHash, now),
    env.DB.prepare(
      `INSERT INTO runners (id, name, token_hash, version, sandbox, created_at, last_seen_at)
       SELECT ?1, ?2, ?3, ?4, ?7, ?5, ?5
       WHERE EXISTS (SELECT 1 FROM registration_tokens WHERE token_hash = ?6 AND used_by = ?1)`,
    ).bind(
      runnerId,
      request.name,
      tokenHash,
      request.version,
      now,
      registrationHash,
      request.sandbox ?? null,
    ),
  ]);
  return inserted?.meta.changes === 1 ? { runnerId, token } : null;
}

/** The runner a token belongs to, marking it seen; null for an unknown token. */
export async function authenticateRunner(
  env: Env,
  token: string,
): Promise<{ id: string; sandbox: SandboxMode | null } | null> {
  const d = drizzle(env.DB);
  const runner = await d
    .select({ id: runners.id, lastSeenAt: runners.lastSeenAt, sandbox: runners.sandbox })
    .from(runners)
    .where(eq(runners.tokenHash, await sha256Hex(token)))
    .get();
  if (!runner) return null;
  const now = Date.now();
  if (runner.lastSeenAt < now - SEEN_RESOLUTION_MS) {
    await d
      .update(runners)
      .set({ lastSeenAt: now })
      .where(and(eq(runners.id, runner.id), lt(runners.lastSeenAt, now - SEEN_RESOLUTION_MS)));
  }
  return { id: runner.id, sandbox: runner.sandbox };
}

/** Records how the runner now runs sessions, when that changed (a restart with or without the sandbox). */
export async function noteSandbox(env: Env, runnerId: string, sandbox: SandboxMode): Promise<void> {
  await drizzle(env.DB).update(runners).set({ sandbox }).where(eq(runners.id, runnerId));
}

/** Every runner with the jobs D1 last recorded as leased to it. */
export async function listRunners(env: Env) {
  const d = drizzle(env.DB);
  const [all, leased] = await d.batch([
    d
      .select({
        id: runners.id,
        name: runners.name,
        version: runners.version,
        sandbox: runners.sandbox,
        createdAt: runners.createdAt,
        lastSeenAt: runners.lastSeenAt,
      })
      .from(runners)
      .orderBy(runners.name, runners.id),
    d
      .select({
        id: jobs.id,
        project: jobs.projectId,
        number: jobs.number,
        kind: jobs.kind,
        attempt: jobs.attempt,
        runnerId: jobs.runnerId,
      })
      .from(jobs)
      .where(eq(jobs.status, "leased")),
  ]);
  return all.map((runner) => ({
    ...runner,
    jobs: leased.filter((job) => job.runnerId === runner.id).map(({ runnerId: _, ...job }) => job),
  }));
}

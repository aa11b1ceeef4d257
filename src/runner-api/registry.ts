/**
 * Runners in D1: one-time registration tokens and per-runner tokens (which expire and rotate), both stored as
 * their SHA-256 only; the projects a runner is bound to, its sandbox, and when it was last seen.
 */
import { and, eq, or } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { z } from "zod";
import { randomToken, sha256Hex } from "../crypto/tokens.ts";
import { jobs, registrationTokens, runners } from "../db/schema.ts";
import {
  checkToken,
  DEFAULT_TOKEN_TTL_SECONDS,
  supersededTokenError,
  suspectRotation,
} from "../domain/runner-tokens.ts";
import type { Env } from "../env.ts";
import { zodMessage } from "../validation.ts";
import type { DiskReport, HostReport, Pressure, RegisterRequest, SandboxKind } from "./contract.ts";
import { runnerPresence, SEEN_RESOLUTION_MS } from "./presence.ts";

/** Prefixes that secret scanners and log redaction recognise. */
export const TOKEN_PREFIXES = { registration: "cvreg_", runner: "cvr_" } as const;

/** What `registerRunner` names a runner. */
export const runnerIdSchema = z.string().regex(/^runner-[0-9a-f]{16}$/, "not a runner id (runner-<16 hex>)");

export async function createRegistrationToken(env: Env, ttlMs: number, projects: string[] | null) {
  const token = randomToken(TOKEN_PREFIXES.registration);
  const now = Date.now();
  const expiresAt = now + ttlMs;
  await drizzle(env.DB)
    .insert(registrationTokens)
    .values({ tokenHash: await sha256Hex(token), createdAt: now, expiresAt, projects });
  return { token, expiresAt, projects };
}

/** How long a runner token lasts: `RUNNER_TOKEN_TTL_SECONDS`, default 30 days. */
export function runnerTokenTtlMs(env: Env): number {
  const ttl = ttlSetting.safeParse(env.RUNNER_TOKEN_TTL_SECONDS ?? DEFAULT_TOKEN_TTL_SECONDS);
  if (!ttl.success) throw new Error(`RUNNER_TOKEN_TTL_SECONDS: ${zodMessage(ttl.error)}`);
  return ttl.data * 1000;
}

const ttlSetting = z.coerce
  .number()
  .int()
  .min(10)
  .max(365 * 24 * 60 * 60);

/**
 * Spends a registration token on a new runner, which inherits the token's projects; an unknown, used or
 * expired token registers nothing.
 */
export async function registerRunner(
  env: Env,
  request: RegisterRequest,
): Promise<{ runnerId: string; token: string } | null> {
  const runnerId = runnerIdSchema.parse(`runner-${randomToken("", 8)}`);
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
      `INSERT INTO runners (id, name, token_hash, token_expires_at, projects, sandbox, version, created_at, last_seen_at)
       SELECT ?1, ?2, ?3, ?4, projects, ?5, ?6, ?7, ?7
       FROM registration_tokens WHERE token_hash = ?8 AND used_by = ?1`,
    ).bind(
      runnerId,
      request.name,
      tokenHash,
      now + runnerTokenTtlMs(env),
      request.sandbox ?? null,
      request.version,
      now,
      registrationHash,
    ),
  ]);
  return inserted?.meta.changes === 1 ? { runnerId, token } : null;
}

export type AuthenticatedRunner = {
  id: string;
  /** The projects its registration bound it to; null: any. */
  projects: string[] | null;
  sandbox: SandboxKind | null;
  /** Its disk use as last recorded (null: never reported). */
  disk: DiskReport | null;
  /** When its memory and load were last recorded (null: never). */
  hostAt: number | null;
  /** Why it holds back, as last recorded (null: it claims). */
  pressure: Pressure | null;
  /** Tell it to rotate its token (`TOKEN_ROTATE_HEADER`). */
  rotate: boolean;
  /** The address this call came from, and the one the runner was seen at before it (null: unknown). */
  address: string | null;
  previousAddress: string | null;
};

/**
 * The runner a token belongs to, marking it seen (from `address`, the caller's); a runner's rotated token
 * replaces the old one on its first use, and the old one is kept (hashed) as superseded: its holder's next
 * call is told so plainly. An error for an unknown (or revoked), superseded or expired token.
 */
export async function authenticateRunner(
  env: Env,
  token: string,
  address: string | null = null,
): Promise<AuthenticatedRunner | { error: string }> {
  const d = drizzle(env.DB);
  const hash = await sha256Hex(token);
  const runner = await d
    .select()
    .from(runners)
    .where(or(eq(runners.tokenHash, hash), eq(runners.nextTokenHash, hash)))
    .get();
  if (!runner) return supersededOrUnknown(env, hash);
  const now = Date.now();
  const check = checkToken(runner, hash, now, runnerTokenTtlMs(env));
  if (!check.ok) return { error: check.error };
  // A call from a runner that said it stopped says it is back.
  const seen =
    runner.lastSeenAt < now - SEEN_RESOLUTION_MS || runner.offlineAt !== null
      ? { lastSeenAt: now, offlineAt: null }
      : {};
  const moved = address !== null && address !== runner.address ? { address } : {};
  const promoted = check.promote
    ? {
        tokenHash: hash,
        tokenExpiresAt: check.expiresAt,
        nextTokenHash: null,
        nextTokenExpiresAt: null,
        supersededTokenHash: runner.tokenHash,
        supersededAt: now,
        supersededSeenAt: null,
      }
    : {};
  if (check.promote || "lastSeenAt" in seen || "address" in moved) {
    await d
      .update(runners)
      .set({ ...seen, ...moved, ...promoted })
      // Only the row as read: a racing promotion or rotation is not undone.
      .where(
        and(eq(runners.id, runner.id), or(eq(runners.tokenHash, hash), eq(runners.nextTokenHash, hash))),
      );
  }
  const disk =
    runner.diskBytes === null || runner.worktrees === null
      ? null
      : {
          bytes: runner.diskBytes,
          worktrees: runner.worktrees,
          ...(runner.diskFreeBytes !== null && { freeBytes: runner.diskFreeBytes }),
          ...(runner.diskTotalBytes !== null && { totalBytes: runner.diskTotalBytes }),
        };
  return {
    id: runner.id,
    projects: runner.projects ?? null,
    sandbox: runner.sandbox,
    disk,
    hostAt: runner.hostAt,
    pressure: runner.pressure,
    rotate: check.rotate,
    address,
    previousAddress: runner.address,
  };
}

/** A token no runner holds: one a rotation replaced is said so (and the moment noted), else unknown. */
async function supersededOrUnknown(env: Env, hash: string): Promise<{ error: string }> {
  const d = drizzle(env.DB);
  const runner = await d
    .select({ id: runners.id, supersededAt: runners.supersededAt })
    .from(runners)
    .where(eq(runners.supersededTokenHash, hash))
    .get();
  if (!runner) return { error: "unknown runner token" };
  await d.update(runners).set({ supersededSeenAt: Date.now() }).where(eq(runners.id, runner.id));
  return { error: supersededTokenError(runner.id, runner.supersededAt) };
}

/**
 * A new token for the runner, pending until its first use; the current one works until then, so a runner
 * that loses the answer keeps working and rotates again. A second rotation replaces the pending token. One
 * asked from another address than the runner was seen at before is recorded (`suspectRotation`): the
 * supervisor reports it and the dashboard shows it.
 */
export async function rotateRunnerToken(env: Env, runner: AuthenticatedRunner) {
  const token = randomToken(TOKEN_PREFIXES.runner);
  const now = Date.now();
  const expiresAt = now + runnerTokenTtlMs(env);
  const suspect = suspectRotation(runner.previousAddress, runner.address, now);
  await drizzle(env.DB)
    .update(runners)
    .set({
      nextTokenHash: await sha256Hex(token),
      nextTokenExpiresAt: expiresAt,
      ...(suspect && { suspectRotation: suspect }),
    })
    .where(eq(runners.id, runner.id));
  return { token, expiresAt };
}

/** The runner said it stops: it shows offline from now until its next call. */
export async function markOffline(env: Env, runnerId: string, now = Date.now()) {
  await drizzle(env.DB)
    .update(runners)
    .set({ offlineAt: now, lastSeenAt: now })
    .where(eq(runners.id, runnerId));
}

/** Records the sandbox a runner reports, when it changed. */
export async function recordSandbox(env: Env, runnerId: string, sandbox: SandboxKind) {
  await drizzle(env.DB).update(runners).set({ sandbox }).where(eq(runners.id, runnerId));
}

/** Memory and load change with every sample; they are recorded at most this often. */
export const HOST_RESOLUTION_MS = 60_000;

/**
 * Records what a runner reports about its host with a claim or heartbeat, in one write: its disk use when it
 * changed (the runner measures it about once a minute), its memory and load when the last record is older than
 * `HOST_RESOLUTION_MS`, and why it holds back (absent: it does not) when that changed. Nothing when none is due.
 */
export async function recordHealth(
  env: Env,
  runner: AuthenticatedRunner,
  reported: { disk?: DiskReport; host?: HostReport; pressure?: Pressure },
  now = Date.now(),
) {
  const { disk, host } = reported;
  const pressure = reported.pressure ?? null;
  const diskChanged = disk !== undefined && !sameDisk(disk, runner.disk);
  const hostDue = host !== undefined && (runner.hostAt === null || runner.hostAt <= now - HOST_RESOLUTION_MS);
  const pressureChanged = JSON.stringify(pressure) !== JSON.stringify(runner.pressure);
  if (!diskChanged && !hostDue && !pressureChanged) return;
  await drizzle(env.DB)
    .update(runners)
    .set({
      ...(diskChanged && {
        diskBytes: disk.bytes,
        worktrees: disk.worktrees,
        diskFreeBytes: disk.freeBytes ?? null,
        diskTotalBytes: disk.totalBytes ?? null,
      }),
      ...(hostDue && { ...host, hostAt: now }),
      // Since it began holding back, not since its figures last moved.
      ...(pressureChanged && {
        pressure,
        pressureSince: pressure === null ? null : runner.pressure === null ? now : undefined,
      }),
    })
    .where(eq(runners.id, runner.id));
}

const sameDisk = (a: DiskReport, b: DiskReport | null) =>
  b !== null &&
  a.bytes === b.bytes &&
  a.worktrees === b.worktrees &&
  a.freeBytes === b.freeBytes &&
  a.totalBytes === b.totalBytes;

/** Deletes the runner: both its tokens die with the row. False when there was no such runner. */
export async function deleteRunner(env: Env, runnerId: string): Promise<boolean> {
  const deleted = await drizzle(env.DB)
    .delete(runners)
    .where(eq(runners.id, runnerId))
    .returning({ id: runners.id });
  return deleted.length > 0;
}

/** Every runner with the jobs D1 last recorded as leased to it, and whether it is there (./presence.ts). */
export async function listRunners(env: Env, now = Date.now()) {
  const d = drizzle(env.DB);
  const [all, leased] = await d.batch([
    d
      .select({
        id: runners.id,
        name: runners.name,
        version: runners.version,
        sandbox: runners.sandbox,
        projects: runners.projects,
        /** When its token expires (unless it rotates first). */
        expiresAt: runners.tokenExpiresAt,
        createdAt: runners.createdAt,
        lastSeenAt: runners.lastSeenAt,
        offlineAt: runners.offlineAt,
        diskBytes: runners.diskBytes,
        worktrees: runners.worktrees,
        diskFreeBytes: runners.diskFreeBytes,
        diskTotalBytes: runners.diskTotalBytes,
        memAvailableBytes: runners.memAvailableBytes,
        memTotalBytes: runners.memTotalBytes,
        load1: runners.load1,
        cpus: runners.cpus,
        hostAt: runners.hostAt,
        pressure: runners.pressure,
        pressureSince: runners.pressureSince,
        address: runners.address,
        suspectRotation: runners.suspectRotation,
        supersededSeenAt: runners.supersededSeenAt,
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
  return all.map((runner) => {
    const jobs = leased.filter((job) => job.runnerId === runner.id).map(({ runnerId: _, ...job }) => job);
    return { ...runner, jobs, presence: runnerPresence({ ...runner, jobs }, now) };
  });
}

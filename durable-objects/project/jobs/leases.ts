/**
 * The ProjectDO's leases: which queued job a runner gets next (src/domain/job-queue.ts decides), the fenced
 * lease it gets it on, the confirmation that the attempt began, and what becomes of a job whose lease is lost
 * (expired, its runner revoked or failing) or that ends for good. Every write runs inside a synchronous
 * transaction with the records it causes; the queue (./queue.ts) and the runner's reports (./runner-reports.ts)
 * call here.
 */
import type { LeaseRefusal, ProjectPolicy } from "../../../src/contracts/project-object.ts";
import { randomToken } from "../../../src/crypto/tokens.ts";
import { budgetPauses, sessionBudget, utcDay } from "../../../src/domain/budget.ts";
import {
  afterLostLease,
  BACKOFF_AFTER_UNCONFIRMED,
  expiredLeases,
  isSession,
  leaseTerm,
  selectJob,
  spendsBudget,
} from "../../../src/domain/job-queue.ts";
import type { Claim } from "../../../src/runner-api/contract.ts";
import type { Wakeups } from "../../shared/wakeups.ts";
import type { ProjectRecords } from "../records.ts";
import type { JobStore, QueuedHead, StoredJob } from "./job-store.ts";

/** The envelope schema's limit for a phase reason. */
export const MAX_REASON = 2_000;

/** Why a lease is lost when its runner stopped speaking under it. */
const LEASE_EXPIRED = "lease expired";

/** What a job's lease means beyond the queue (an agent run's record): told at each point, inside the transaction. */
export type LeaseHooks = {
  leased(job: StoredJob, now: number): void;
  requeued(job: StoredJob, now: number): void;
  ended(project: string, job: StoredJob, reason: string, now: number): void;
  /** The job is an agent run (`runId`; null for any other job) a forge event started: their own daily budget. */
  isEventRun(runId: string | null): boolean;
  /** What event runs spent on UTC day `day`. */
  eventSpendUsd(day: string): number;
  /** The job is an escalation's triage: a human waits for its answer, so it goes ahead of queued work. */
  isUrgent(runId: string | null): boolean;
};

export type Fenced = { ok: true; job: StoredJob; project: string; policy: ProjectPolicy } | LeaseRefusal;

export class Leases {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: JobStore,
    private readonly records: ProjectRecords,
    private readonly waiters: Wakeups,
    private readonly hooks: LeaseHooks,
  ) {}

  /**
   * The job `runnerId` would get now, holding the worktrees of `holding` (`<project>#<number>`), as the choice
   * reads it (columns, no spec); leases nothing.
   */
  select(runnerId: string, holding: readonly string[], now: number): QueuedHead | null {
    const meta = this.store.meta();
    if (!meta) return null;
    const prefix = `${meta.project}#`;
    const held = new Set(
      holding.filter((ref) => ref.startsWith(prefix)).map((ref) => Number(ref.slice(prefix.length))),
    );
    // Past the daily cap no session or agent run starts (work already leased finishes; reaps still run); past
    // theirs, no event run does, while sessions go on.
    const pauses = this.pauses(utcDay(now), meta.policy.budget);
    const paused = (job: QueuedHead) =>
      spendsBudget(job.kind) && (this.hooks.isEventRun(job.runId) ? pauses.events : pauses.work) !== null;
    // Leased jobs only count (slots, issues at work); no spec is read but the chosen job's, by `lease`.
    const queued = this.store
      .queuedHeads()
      .filter((job) => !paused(job))
      .map((job) => (this.hooks.isUrgent(job.runId) ? { ...job, urgent: true } : job));
    const open = [...this.store.leasedSlots(), ...queued];
    return selectJob(open, { runnerId, holding: held }, now, meta.policy.parallel);
  }

  /** What today's spend pauses (src/domain/budget.ts): work, and event runs. */
  pauses(day: string, limits: ProjectPolicy["budget"]) {
    return budgetPauses(this.store.daySpendUsd(day), this.hooks.eventSpendUsd(day), limits);
  }

  /** Leases the job `runnerId` should run next, on a short lease until its runner confirms it; null if none. */
  lease(runnerId: string, holding: readonly string[], now: number): Claim | null {
    this.expire(now);
    return this.storage.transactionSync(() => {
      const meta = this.store.meta();
      const chosen = this.select(runnerId, holding, now);
      const job = chosen && this.store.byId(chosen.id);
      if (!meta || !job) return null;
      const leaseToken = randomToken("lease_", 16);
      // Short until the runner confirms it: nobody may have received this answer.
      const leaseMs = leaseTerm(false, meta.policy);
      const leaseExpiresAt = now + leaseMs;
      const leased: StoredJob = {
        ...job,
        status: "leased",
        runnerId,
        leaseToken,
        leaseExpiresAt,
        leasedAt: now,
        confirmed: false,
        updatedAt: now,
      };
      this.store.save(leased);
      this.records.job(meta.project, leased, now);
      this.hooks.leased(job, now);
      // The budget is what the issue has left now, not when the job was enqueued; an agent run's is its own.
      const budget = job.spec.agent
        ? job.spec.budget
        : sessionBudget(this.store.issueSpend(job.number), meta.policy.budget);
      // A re-leased job resumes the session its earlier attempt started, wherever that attempt ran.
      const sessionId = job.sessionId ?? job.spec.sessionId;
      return {
        job: { ...job.spec, budget, sessionId, id: job.id, attempt: job.attempt },
        leaseToken,
        leaseExpiresAt,
        leaseMs,
      };
    });
  }

  /**
   * The job's runner spoke under its lease: the attempt has begun. Its issue hears `dispatched` now, not at
   * the lease, so a lease nobody received never starts the issue's session. Inside a transaction; the caller
   * saves the job it returns.
   */
  confirm(project: string, job: StoredJob, now: number): StoredJob {
    if (job.confirmed) return job;
    const runnerId = job.runnerId ?? "";
    if (isSession(job.kind)) {
      this.records.issueEvent(project, job, `job:${job.id}:${job.attempt}:dispatched`, now, {
        type: "dispatched",
        jobId: job.id,
        runnerId,
        attempt: job.attempt,
      });
    }
    // A runner took it after all: the streak of leases nobody confirmed is over.
    return { ...job, confirmed: true, unconfirmed: 0, notBefore: 0 };
  }

  /**
   * The job under the caller's lease. 403 when its lease belongs (or last belonged) to another runner; 409 when
   * the token is not the job's current lease: it expired, was requeued, or the job was never leased to it.
   */
  fence(jobId: string, runnerId: string, leaseToken: string, now: number): Fenced {
    this.expire(now);
    return this.check(jobId, runnerId, leaseToken);
  }

  /**
   * `fence` without the expiry check first: for a report on many jobs, which runs that check once and reads
   * the project's policy (`meta`) once.
   */
  check(jobId: string, runnerId: string, leaseToken: string, meta = this.store.meta()): Fenced {
    const job = this.store.byId(jobId);
    if (!meta || !job) return refuse(404, `job ${jobId} is unknown`);
    if (job.runnerId !== runnerId) return refuse(403, `job ${jobId} is not leased to this runner`);
    if (job.leaseToken !== leaseToken) return refuse(409, `the lease on job ${jobId} is not current`);
    return { ok: true, job, project: meta.project, policy: meta.policy };
  }

  /** Also run before every lease decision: the alarm set for the expiry is due, and delivers what this writes. */
  expire(now: number): void {
    const meta = this.store.meta();
    if (!meta) return;
    const expired = expiredLeases(this.store.expiring(now), now);
    if (expired.length === 0) return;
    this.storage.transactionSync(() => {
      // An expired lease's token is void at once: its runner's late calls are fenced off.
      for (const job of expired) {
        this.lose(meta.project, { ...job, leaseToken: null }, LEASE_EXPIRED, now, meta.policy);
      }
    });
    this.waiters.wake();
  }

  /** Its runner was revoked: the leases it holds are void at once and their jobs requeue for others. */
  dropRunner(runnerId: string, now: number): number {
    const meta = this.store.meta();
    const held = this.store.leased().filter((job) => job.runnerId === runnerId);
    if (!meta || held.length === 0) return 0;
    this.storage.transactionSync(() => {
      for (const job of held) {
        this.lose(meta.project, { ...job, leaseToken: null }, "runner revoked", now, meta.policy, true);
      }
    });
    this.waiters.wake();
    return held.length;
  }

  /**
   * The lease is lost: the job requeues (with affinity; after leases nobody confirmed, with backoff) or, out
   * of attempts or past `maxUnconfirmed`, fails. Its issue hears when the backoff begins and when it gives up;
   * a session whose runner was lost on its last attempt (expired, revoked) fails as `lost`, which is transient.
   */
  lose(
    project: string,
    job: StoredJob,
    cause: string,
    now: number,
    policy: ProjectPolicy,
    runnerGone = false,
  ): void {
    const next = afterLostLease(job, cause, now, policy, runnerGone);
    const stalled = (count: number, more: { retryInMs?: number; gaveUp?: true }) =>
      this.records.issueEvent(project, job, `job:${job.id}:unconfirmed:${count}`, now, {
        type: "lease_unconfirmed",
        jobId: job.id,
        count,
        ...more,
      });
    if (next.action === "fail" && next.unconfirmed !== undefined) {
      this.end(project, { ...job, unconfirmed: next.unconfirmed }, next.reason, now, { sessionFails: false });
      if (isSession(job.kind)) stalled(next.unconfirmed, { gaveUp: true });
      return;
    }
    if (next.action !== "requeue") {
      const lost = runnerGone || cause === LEASE_EXPIRED;
      this.end(project, job, next.action === "fail" ? next.reason : null, now, { lost });
      return;
    }
    if (next.unconfirmed === BACKOFF_AFTER_UNCONFIRMED && !runnerGone && isSession(job.kind)) {
      stalled(next.unconfirmed, { retryInMs: Math.max(0, next.notBefore - now) });
    }
    const { action: _, ...patch } = next;
    const requeued: StoredJob = {
      ...job,
      ...patch,
      status: "queued",
      leaseToken: null,
      leaseExpiresAt: null,
      updatedAt: now,
    };
    this.store.save(requeued);
    this.records.job(project, requeued, now);
    this.hooks.requeued(job, now);
  }

  /**
   * Ends a job that will not run again: failed with a reason (its issue's session fails too, unless the
   * caller tells the issue itself: `sessionFails` false; `lost`: because its runner was lost), else cancelled
   * (`why`: what its run record says, "cancelled" unless told).
   */
  end(
    project: string,
    job: StoredJob,
    reason: string | null,
    now: number,
    {
      why = "cancelled",
      sessionFails = true,
      lost = false,
    }: { why?: string; sessionFails?: boolean; lost?: boolean } = {},
  ): void {
    const ended: StoredJob = { ...job, status: reason === null ? "cancelled" : "failed", updatedAt: now };
    this.store.save(ended);
    this.records.job(project, ended, now);
    this.hooks.ended(project, job, reason ?? why, now);
    if (reason !== null && sessionFails && isSession(job.kind)) {
      this.records.issueEvent(project, job, `job:${job.id}:failed`, now, {
        type: "phase",
        phase: "failed",
        jobId: job.id,
        attempt: job.attempt,
        reason: reason.slice(0, MAX_REASON),
        ...(lost && { lost: true as const }),
      });
    }
  }
}

export const refuse = (status: LeaseRefusal["status"], error: string): LeaseRefusal => ({
  ok: false,
  status,
  error,
});

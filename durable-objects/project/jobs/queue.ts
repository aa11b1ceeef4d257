/**
 * The ProjectDO's job queue as its callers see it: jobs enqueued once per key (an IssueDO effect's, an agent
 * run's), claims that long-poll until a job can be leased (./leases.ts), an issue's jobs cancelled, and the
 * queue's read side (recent jobs, spend, whether dispatch is paused).
 */
import type {
  AgentRunRequest,
  DispatchStatus,
  EnqueueRequest,
  JobSpec,
  JobSummary,
  ProjectPolicy,
} from "../../../src/contracts/project-object.ts";
import { utcDay } from "../../../src/domain/budget.ts";
import { enqueueAffinity } from "../../../src/domain/job-queue.ts";
import { newJobId } from "../../../src/project-stub.ts";
import type { Claim } from "../../../src/runner-api/contract.ts";
import type { Wakeups } from "../../shared/wakeups.ts";
import type { AgentJobs } from "../agents/agent-jobs.ts";
import type { ProjectRecords } from "../records.ts";
import type { JobStore } from "./job-store.ts";
import type { Leases } from "./leases.ts";

/** Finished jobs are kept this long: re-delivered enqueues and late runner calls still find them. */
const RETENTION_MS = 30 * 24 * 60 * 60_000;
/** Waiting claims a new job or a freed slot wakes. */
export const WAKES_PER_JOB = 2;

type Queued = { jobId: string; created: boolean };

export class JobQueue {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: JobStore,
    private readonly records: ProjectRecords,
    private readonly leases: Leases,
    private readonly waiters: Wakeups,
    private readonly agentJobs: AgentJobs,
  ) {}

  /** Queues a job once per key; a few waiting claims look again when it is new. */
  enqueue({ key, spec, policy }: EnqueueRequest, now: number): Queued {
    const result = this.storage.transactionSync(() => this.insert(key, spec, policy, now));
    if (result.created) this.wakeFor(result.jobId);
    return result;
  }

  /**
   * A new job, or a slot that came free, is for one claim: `WAKES_PER_JOB` waiting claims look again, the
   * runner the job waits for first. Not one: a runner killed while its poll waited may still be waiting here
   * (its hang-up does not always reach the Worker), and the next takes the job then.
   */
  private wakeFor(jobId: string): void {
    const affinity = this.store.byId(jobId)?.affinity ?? null;
    this.waiters.wakeSome(WAKES_PER_JOB, affinity);
  }

  /**
   * A grace period or a backoff may have ended (the alarm): each queued job gets its few waiting claims. None
   * when nothing is queued, which on a busy project is most alarms (the outbox's each second).
   */
  wakeForQueued(): void {
    const queued = this.store.queuedCount();
    if (queued > 0) this.waiters.wakeSome(WAKES_PER_JOB * queued);
  }

  /**
   * Queues an agent run: its job and its run record in one transaction; the same run id queues once. A run a
   * forge event started supersedes the same agent's run on the same subject still waiting in the queue.
   */
  startAgentRun(request: AgentRunRequest, now: number): Queued {
    const result = this.storage.transactionSync(() => {
      const queued = this.insert(`agent:${request.runId}`, request.spec, request.policy, now);
      if (!queued.created) return queued;
      const earlier = this.agentJobs.queued(request, queued.jobId, now, now - RETENTION_MS);
      for (const id of earlier) {
        const job = this.store.byId(id);
        if (job?.status === "queued")
          this.leases.end(request.spec.project, job, null, now, { why: `superseded by ${request.runId}` });
      }
      return queued;
    });
    if (result.created) this.wakeFor(result.jobId);
    return result;
  }

  /**
   * Leases the job `runnerId` should run next, waiting up to `waitMs` for one; null if none came. `leased`
   * sends what the lease wrote.
   */
  async claim(
    runnerId: string,
    holding: readonly string[],
    waitMs: number,
    leased: () => Promise<void>,
  ): Promise<Claim | null> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const claim = this.leases.lease(runnerId, holding, Date.now());
      if (claim) {
        await leased();
        return claim;
      }
      if (!(await this.waitForJob(runnerId, holding, deadline - Date.now()))) return null;
    }
  }

  /**
   * Resolves true as soon as `runnerId` could claim a job here, false after `waitMs`. Leases nothing, so a
   * caller waiting on several projects at once can claim from the one that answers and lose nothing elsewhere.
   */
  async waitForJob(runnerId: string, holding: readonly string[], waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const now = Date.now();
      this.leases.expire(now);
      if (this.leases.select(runnerId, holding, now)) return true;
      if (now >= deadline) return false;
      await this.waiters.next(deadline - now, runnerId);
    }
  }

  /** The issue left the queue's hands: queued jobs are dropped, leased ones told to stop at their heartbeat. */
  cancel(number: number, now: number): number {
    return this.storage.transactionSync(() => {
      const meta = this.store.meta();
      const jobs = this.store.open().filter((job) => job.number === number);
      for (const job of jobs) {
        if (job.status === "leased") this.store.save({ ...job, cancelled: true, updatedAt: now });
        else if (meta) this.leases.end(meta.project, job, null, now);
      }
      return jobs.length;
    });
  }

  /** The most recent jobs, newest first. */
  recent(limit: number): JobSummary[] {
    return this.store.recent(limit).map(({ seq: _, key: _k, spec: _s, leaseToken: _t, ...job }) => job);
  }

  /**
   * What an issue's sessions have cost, as recorded with each usage report: the dashboard's D1 rows are
   * written from the same records, and may not have landed yet when an escalation is written.
   */
  issueSpendUsd(number: number): number {
    return this.store.issueSpend(number).usd;
  }

  /**
   * What the supervisor reads of the queue: the open jobs, what today's work spent (everything but event runs,
   * whose spend has its own cap), and the runners that held a job within `servingMs`.
   */
  supervised(now: number, servingMs: number) {
    const day = utcDay(now);
    return {
      jobs: this.store.open(),
      spentTodayUsd: this.store.daySpendUsd(day) - this.agentJobs.eventSpendUsd(day),
      servedBy: this.store.runnersSince(now - servingMs),
    };
  }

  /** Whether work and event runs are being dispatched, and today's spend. */
  dispatchStatus(now: number): DispatchStatus {
    const meta = this.store.meta();
    const day = utcDay(now);
    const spentTodayUsd = this.store.daySpendUsd(day);
    const events = this.agentJobs.eventSpendUsd(day);
    const pauses = meta ? this.leases.pauses(day, meta.policy.budget) : { work: null, events: null };
    return {
      paused: pauses.work,
      spentTodayUsd,
      eventRuns: { paused: pauses.events, spentTodayUsd: events },
    };
  }

  private insert(key: string, spec: JobSpec, policy: ProjectPolicy, now: number): Queued {
    const owner = this.store.meta()?.project;
    if (owner && owner !== spec.project) throw new Error(`job for ${spec.project} sent to ${owner}`);
    this.store.saveMeta(spec.project, policy);
    const existing = this.store.byKey(key);
    if (existing) return { jobId: existing.id, created: false };
    this.store.prune(now - RETENTION_MS);
    const job = this.store.insert({
      id: newJobId(spec.project, spec.issue.number),
      key,
      number: spec.issue.number,
      kind: spec.kind,
      status: "queued",
      attempt: 1,
      spec,
      runnerId: null,
      leaseToken: null,
      leaseExpiresAt: null,
      leasedAt: null,
      cancelled: false,
      confirmed: false,
      unconfirmed: 0,
      notBefore: 0,
      ...enqueueAffinity(spec.kind, this.store.lastRunner(spec.issue.number), now, policy),
      sessionId: null,
      branch: null,
      headSha: null,
      createdAt: now,
      updatedAt: now,
    });
    this.records.job(spec.project, job, now);
    return { jobId: job.id, created: true };
  }
}

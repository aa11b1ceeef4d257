/**
 * One Durable Object per project: its job queue. Jobs come in from IssueDO effects (idempotent by effect
 * key), go out to runners on fenced leases, and come back as lifecycle events for their issues. Every state
 * change is written with the records it causes (issue events, D1 rows) in one synchronous transaction, and
 * delivered from the outbox by the object's single alarm, which also expires leases and ends grace periods,
 * and starts the project's reconciliation cycles (./reconciliation.ts). What a job that is an agent run means
 * at each point of its life is ./agent-jobs.ts's, called once at each; the vault and the supervisor are
 * their own modules too (./vault.ts, ./supervisor.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { AgentTrigger } from "../src/agents/triggers.ts";
import { randomToken } from "../src/crypto/tokens.ts";
import { dailyCapReached, issueBudgetExceeded, sessionBudget, utcDay } from "../src/domain/budget.ts";
import {
  afterLostLease,
  enqueueAffinity,
  expiredLeases,
  isSession,
  leaseTerm,
  nextDeadline,
  selectJob,
  spendsBudget,
} from "../src/domain/job-queue.ts";
import type { LifecycleEvent } from "../src/domain/lifecycle.ts";
import { itemHead, type VaultItemHead } from "../src/domain/vault.ts";
import type { Env } from "../src/env.ts";
import type { EventEnvelope } from "../src/issue-events.ts";
import { issueStub } from "../src/issue-stub.ts";
import { newJobId } from "../src/project-stub.ts";
import { supervisorSettingsSchema } from "../src/projects/config.ts";
import { loadProject, type Project } from "../src/projects/store.ts";
import type {
  Claim,
  CompleteRequest,
  FailRequest,
  FireResponse,
  RunnerEvent,
} from "../src/runner-api/contract.ts";
import { AgentJobs } from "./agent-jobs.ts";
import { AGENT_CHANNELS, type AgentRunRequest, type AgentRunView } from "./agent-runs.ts";
import type { ScheduleCheck } from "./agent-schedules.ts";
import { armAlarm, deliverSoon, outboxAlarm } from "./alarm.ts";
import { type JobRecord, writeJobRecords } from "./job-sink.ts";
import { type JobSpec, JobStore, type ProjectPolicy, type StoredJob } from "./job-store.ts";
import { MergeTurns } from "./merge-turn.ts";
import { deliverInOrder, Outbox, type OutboxRow } from "./outbox.ts";
import { type CycleOutcome, Reconciliation } from "./reconciliation.ts";
import { type Health, Supervisor, type SupervisorHooks, type SupervisorRun } from "./supervisor.ts";
import {
  VAULT_CHANNELS,
  Vault,
  type VaultDecideRequest,
  type VaultDecideResult,
  type VaultRequest,
} from "./vault.ts";

const D1_BATCH = 50;
/** The supervisor's period until the project's settings say otherwise (its first check reads them). */
const DEFAULT_SUPERVISOR_PERIOD_MS = supervisorSettingsSchema.parse({}).periodMs;
/**
 * Job records go to D1 in batches: the first waits this long, the ones written meanwhile join it, so a burst
 * of jobs is one D1 write rather than one per job. D1's job rows are a read model (dashboards, the runners
 * list); the queue itself is this object.
 */
export const RECORD_DELAY_MS = 1_000;
/** Finished jobs are kept this long: re-delivered enqueues and late runner calls still find them. */
const RETENTION_MS = 30 * 24 * 60 * 60_000;
/** The envelope schema's limit for a phase reason. */
const MAX_REASON = 2_000;
const CHANNELS = { d1: "d1", issue: "issue", ...AGENT_CHANNELS, ...VAULT_CHANNELS } as const;
/**
 * A merge's turn lasts its stay-current check (GitHub's update-branch is waited for, about 10 s at most) and
 * the forge's answer, each under the forge client's own timeouts and retries; past this it is taken back.
 */
const MERGE_TURN_HOLD_MS = 120_000;
/** How long a merge waits for its turn before its outbox tries again later. */
const MERGE_TURN_WAIT_MS = 30_000;

export type EnqueueRequest = {
  /** The IssueDO effect key: the same key enqueues once, however often it is delivered. */
  key: string;
  spec: JobSpec;
  policy: ProjectPolicy;
};

/** Why a runner's call about a job was refused; the HTTP status it maps to. */
export type LeaseRefusal = { ok: false; status: 403 | 404 | 409; error: string };

export type JobSummary = Omit<StoredJob, "seq" | "key" | "spec" | "leaseToken">;

export class ProjectDO extends DurableObject<Env> {
  private readonly store: JobStore;
  private readonly outbox: Outbox;
  private readonly reconciliation: Reconciliation;
  private readonly agentJobs: AgentJobs;
  private readonly vault: Vault;
  private readonly supervisor: Supervisor;
  /** Long-polling claims, woken whenever a job may have become claimable. */
  private readonly waiters = new Set<() => void>();
  private flushing: Promise<void> | null = null;
  private classifying: Promise<void> | null = null;
  private readonly mergeTurns = new MergeTurns();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new JobStore(ctx.storage.sql);
    this.outbox = new Outbox(ctx.storage.sql);
    this.reconciliation = new Reconciliation(ctx.storage.sql);
    const issueEvent = (envelope: EventEnvelope, now: number) =>
      this.outbox.enqueue(CHANNELS.issue, envelope, now);
    this.vault = new Vault(ctx.storage, this.outbox, {
      record: (record, now) => this.recordD1(record, now),
      issueEvent,
      agentOutput: (requester, decision, now) => this.agentJobs.heldOutputDecided(requester, decision, now),
    });
    this.agentJobs = new AgentJobs({
      env,
      storage: ctx.storage,
      outbox: this.outbox,
      store: this.store,
      vault: this.vault,
      project: () => this.projectName(),
      usage: (project, job, event, now) => this.recordUsage(project, job, event, now),
      issueEvent,
      start: (request) => this.startAgentRun(request),
    });
    this.supervisor = new Supervisor(ctx.storage, this.outbox);
    // After a crash between a commit and its setAlarm, the next wake-up re-arms the alarm.
    ctx.blockConcurrencyWhile(() => this.scheduleAlarm());
  }

  async enqueue({ key, spec, policy }: EnqueueRequest): Promise<{ jobId: string; created: boolean }> {
    const now = Date.now();
    const result = this.ctx.storage.transactionSync(() => this.insertJob(key, spec, policy, now));
    if (result.created) this.wake();
    // The job's record is delivered by the alarm, with the others of the next second.
    await this.scheduleAlarm();
    return result;
  }

  /** Queues an agent run: its job and its run record in one transaction; the same run id queues once. */
  async startAgentRun(request: AgentRunRequest): Promise<{ runId: string; jobId: string }> {
    const now = Date.now();
    const { runId, spec } = request;
    const result = this.ctx.storage.transactionSync(() => {
      const queued = this.insertJob(`agent:${runId}`, spec, request.policy, now);
      if (queued.created) this.agentJobs.queued(request, queued.jobId, now, now - RETENTION_MS);
      return queued;
    });
    if (result.created) this.wake();
    await this.scheduleAlarm();
    return { runId, jobId: result.jobId };
  }

  // --- the vault (./vault.ts) -----------------------------------------------------------------------------

  /** Puts a dangerous action in the vault, pending; the same `key` requests once. */
  async vaultRequest(request: VaultRequest): Promise<{ id: string }> {
    const project = this.projectName();
    const settings = (await loadProject(this.env, project))?.settings;
    if (!settings) throw new Error(`project ${project} is not registered`);
    const { id } = this.vault.request(project, request, settings.vault.expiryMs, Date.now());
    await this.deliverSoon();
    return { id };
  }

  /** A human's or the operator's approval or rejection of item `id`. */
  async vaultDecide(id: string, request: VaultDecideRequest): Promise<VaultDecideResult> {
    const result = this.vault.decide(this.projectName(), id, request, Date.now());
    if (result.ok) await this.deliverSoon();
    return result;
  }

  vaultItem(id: string): VaultItemHead | null {
    const item = this.vault.item(id);
    return item && itemHead(item);
  }

  /** What item `id` approved (its payload) once a decision approved it; null otherwise. */
  approvedVaultPayload(id: string): unknown {
    const item = this.vault.item(id);
    return item && (item.state === "approved" || item.state === "fired") ? item.payload : null;
  }

  /** The project this object is for: the name it is addressed by (idFromName), else the project of its jobs. */
  private projectName(): string {
    return this.ctx.id.name ?? this.store.meta()?.project ?? "";
  }

  /** A forge event (webhook delivery `deliveryId`) starts the agents whose `on` names it: their run ids. */
  triggerAgents(project: Project, trigger: AgentTrigger, deliveryId: string): Promise<string[]> {
    return this.agentJobs.trigger(project, trigger, deliveryId);
  }

  /** A push to the default branch changed `.conveyor/agents/`: the next event reads the catalog again. */
  forgetAgentCatalog(): void {
    this.agentJobs.forgetCatalog();
  }

  /** An agent run as it stands, its cost from the project's spend. */
  agentRun(runId: string): AgentRunView | null {
    return this.agentJobs.view(runId);
  }

  /** Each agent's latest run. */
  latestAgentRuns(): AgentRunView[] {
    return this.agentJobs.latest();
  }

  /** An agent's most recent runs, newest first. */
  recentAgentRuns(agent: string, limit = 50): AgentRunView[] {
    return this.agentJobs.recent(agent, limit);
  }

  private insertJob(key: string, spec: JobSpec, policy: ProjectPolicy, now: number) {
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
      ...enqueueAffinity(spec.kind, this.store.lastRunner(spec.issue.number), now, policy),
      sessionId: null,
      branch: null,
      headSha: null,
      createdAt: now,
      updatedAt: now,
    });
    this.recordJob(spec.project, job, now);
    return { jobId: job.id, created: true };
  }

  /** Leases the job `runnerId` should run next, waiting up to `waitMs` for one; null if none came. */
  async claim(runnerId: string, holding: readonly string[], waitMs: number): Promise<Claim | null> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const leased = this.lease(runnerId, holding);
      if (leased) {
        await this.deliverSoon();
        return leased;
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
      this.expireLeases(now);
      if (this.select(runnerId, holding, now)) return true;
      if (now >= deadline) return false;
      await this.nextWake(deadline - now);
    }
  }

  async heartbeat(
    jobId: string,
    runnerId: string,
    leaseToken: string,
  ): Promise<{ ok: true; leaseExpiresAt: number; leaseMs: number; cancelled: boolean } | LeaseRefusal> {
    const now = Date.now();
    const fenced = this.fence(jobId, runnerId, leaseToken, now);
    if (!fenced.ok) return fenced;
    const { policy, project } = fenced;
    if (fenced.job.status !== "leased") return refuse(409, `job ${jobId} is ${fenced.job.status}`);
    const leaseMs = leaseTerm(true, policy);
    const leaseExpiresAt = now + leaseMs;
    const confirming = !fenced.job.confirmed;
    const job = this.ctx.storage.transactionSync(() => {
      const job = { ...this.confirm(project, fenced.job, now), leaseExpiresAt, updatedAt: now };
      this.store.save(job);
      return job;
    });
    // The first heartbeat wrote the issue's `dispatched`: out now. Later ones only move the deadline.
    if (confirming) await this.deliverSoon();
    else await this.scheduleAlarm();
    return { ok: true, leaseExpiresAt, leaseMs, cancelled: job.cancelled };
  }

  /**
   * The runner is about to run the dangerous step `step` of the job's action: its vault approval is spent now,
   * under the job's current lease, once (vault.ts fireStep).
   */
  async fireStep(
    jobId: string,
    runnerId: string,
    leaseToken: string,
    step: string,
  ): Promise<({ ok: true } & FireResponse) | LeaseRefusal> {
    const now = Date.now();
    const fenced = this.fence(jobId, runnerId, leaseToken, now);
    if (!fenced.ok) return fenced;
    const { job, project } = fenced;
    if (job.status !== "leased") return refuse(409, `the lease on job ${jobId} is not current`);
    const { approvedStep, approvedItem } = job.spec.action ?? {};
    if (approvedStep !== step || !approvedItem)
      return { ok: true, fired: false, reason: `job ${jobId} carries no vault approval of step ${step}` };
    const fired = this.vault.fireStep(project, approvedItem, { issue: job.number, step, jobId }, now);
    if (fired.fired) await this.deliverSoon();
    return { ok: true, ...fired };
  }

  /** What the runner reports while the job runs; accepted under the job's current or finishing lease. */
  async events(
    jobId: string,
    runnerId: string,
    leaseToken: string,
    events: readonly RunnerEvent[],
  ): Promise<{ ok: true } | LeaseRefusal> {
    const now = Date.now();
    const fenced = this.fence(jobId, runnerId, leaseToken, now);
    if (!fenced.ok) return fenced;
    const { project } = fenced;
    let job = fenced.job;
    this.ctx.storage.transactionSync(() => {
      if (job.status === "leased") job = this.confirm(project, job, now);
      for (const event of events) {
        switch (event.kind) {
          case "session":
            job = { ...job, sessionId: event.sessionId };
            if (isSession(job.kind)) this.recordD1(sessionRecord(project, job, runnerId, event, now), now);
            break;
          case "usage": {
            const id = this.recordUsage(project, job, event, now);
            // An agent run's spend is the project's and its run's, never an issue's.
            if (this.agentJobs.spent(job)) break;
            const over = issueBudgetExceeded(this.store.issueSpend(job.number), fenced.policy.budget);
            if (over) {
              this.recordIssueEvent(project, job, `budget:${id}`, now, {
                type: "budget_exceeded",
                reason: over,
              });
            }
            break;
          }
          case "pushed":
            // A claim about the job's own branch only; the issue checks it against the forge's branch head.
            if (event.branch === job.spec.branch)
              job = { ...job, branch: event.branch, headSha: event.headSha };
            break;
          case "log":
            // Logged by the Worker, which strips secrets; nothing to keep here.
            break;
          case "activity":
            // The issue's to keep, below.
            break;
          case "progress":
            // An action's note, posted once on its issue: the id names the job attempt's note.
            if (job.spec.action) {
              this.recordIssueEvent(project, job, `progress:${job.id}:${job.attempt}:${event.seq}`, now, {
                type: "reply",
                thread: job.number,
                // Within the reply's 2 000 characters.
                text: `**Progress:** ${event.text}`.slice(0, 2_000),
              });
            }
            break;
        }
      }
      this.store.save({ ...job, updatedAt: now });
    });
    await this.deliverSoon();
    const activity = events.flatMap((event) => (event.kind === "activity" ? event.items : []));
    if (activity.length > 0 && isSession(job.kind)) {
      // Informational: a page that misses it loses nothing the lifecycle needs.
      await issueStub(this.env, project, job.number)
        .noteActivity(job.id, activity.slice(-50))
        .catch((error: unknown) =>
          console.warn(JSON.stringify({ msg: "activity not kept", error: String(error) })),
        );
    }
    return { ok: true };
  }

  /** The session ended a phase: the job is done and its issue hears the phase (unless it was cancelled). */
  async complete(
    jobId: string,
    runnerId: string,
    request: CompleteRequest,
  ): Promise<{ ok: true } | LeaseRefusal> {
    const now = Date.now();
    const fenced = this.fence(jobId, runnerId, request.leaseToken, now);
    if (!fenced.ok) return fenced;
    const { project } = fenced;
    if (fenced.job.status !== "leased") return { ok: true };
    this.ctx.storage.transactionSync(() => {
      const job = this.confirm(project, fenced.job, now);
      const done: StoredJob = { ...job, status: job.cancelled ? "cancelled" : "done", updatedAt: now };
      this.store.save(done);
      this.recordJob(project, done, now);
      this.agentJobs.completed(project, job, request, now);
      if (!job.cancelled && isSession(job.kind)) {
        const sessionId = request.sessionId ?? job.sessionId;
        // The branch is the job's, never the runner's choice.
        const branch = job.spec.branch;
        const headSha = request.headSha ?? job.headSha;
        this.recordIssueEvent(project, job, `job:${job.id}:complete`, now, {
          type: "phase",
          phase: request.phase,
          jobId: job.id,
          attempt: job.attempt,
          ...(request.reason !== undefined && { reason: request.reason }),
          ...(sessionId && { sessionId }),
          ...(branch && { branch }),
          ...(headSha && { headSha }),
          ...(request.summary && { summary: request.summary }),
          ...(request.step && job.spec.action && { step: request.step }),
        });
      }
    });
    this.wake();
    await this.deliverSoon();
    return { ok: true };
  }

  /** A retryable failure loses the lease like an expiry; any other fails the job and its issue's session. */
  async fail(jobId: string, runnerId: string, request: FailRequest): Promise<{ ok: true } | LeaseRefusal> {
    const now = Date.now();
    const fenced = this.fence(jobId, runnerId, request.leaseToken, now);
    if (!fenced.ok) return fenced;
    const { project, policy } = fenced;
    if (fenced.job.status !== "leased") return { ok: true };
    // Short enough that the attempt count after it survives the reason's limit.
    const cause = `runner failed: ${request.error.slice(0, MAX_REASON / 2)}`;
    this.ctx.storage.transactionSync(() => {
      // Reported by its runner: the attempt began, even if no heartbeat said so.
      const job = this.confirm(project, fenced.job, now);
      if (request.retryable) this.loseLease(project, job, cause, now, policy);
      else this.end(project, job, job.cancelled ? null : cause, now);
    });
    this.wake();
    await this.deliverSoon();
    return { ok: true };
  }

  /** The issue left the queue's hands: queued jobs are dropped, leased ones told to stop at their heartbeat. */
  async cancel(number: number): Promise<{ cancelled: number }> {
    const now = Date.now();
    const cancelled = this.ctx.storage.transactionSync(() => {
      const meta = this.store.meta();
      const jobs = this.store.open().filter((job) => job.number === number);
      for (const job of jobs) {
        if (job.status === "leased") this.store.save({ ...job, cancelled: true, updatedAt: now });
        else if (meta) this.end(meta.project, job, null, now);
      }
      return jobs.length;
    });
    await this.deliverSoon();
    return { cancelled };
  }

  /** Its runner was revoked: the leases it holds here are void at once and their jobs requeue for others. */
  async dropRunner(runnerId: string): Promise<{ requeued: number }> {
    const now = Date.now();
    const meta = this.store.meta();
    const held = this.store.leased().filter((job) => job.runnerId === runnerId);
    if (!meta || held.length === 0) return { requeued: 0 };
    this.ctx.storage.transactionSync(() => {
      for (const job of held) {
        this.loseLease(meta.project, { ...job, leaseToken: null }, "runner revoked", now, meta.policy, true);
      }
    });
    this.wake();
    await this.deliverSoon();
    return { requeued: held.length };
  }

  /** The most recent jobs, newest first. */
  jobs(limit = 100): JobSummary[] {
    return this.store.recent(limit).map(({ seq: _, key: _k, spec: _s, leaseToken: _t, ...job }) => job);
  }

  /**
   * What an issue's sessions have cost, as recorded with each usage report: the dashboard's D1 rows are
   * written from the same records, and may not have landed yet when an escalation is written.
   */
  issueSpendUsd(number: number): number {
    return this.store.issueSpend(number).usd;
  }

  /** Whether sessions are being dispatched, and today's spend. */
  dispatchStatus(): { paused: string | null; spentTodayUsd: number } {
    const meta = this.store.meta();
    const spentTodayUsd = this.store.daySpendUsd(utcDay(Date.now()));
    return { paused: meta ? dailyCapReached(spentTodayUsd, meta.policy.budget) : null, spentTodayUsd };
  }

  /** The project's turn to merge, for the merge effect `key` (see ./merge-turn.ts); false if it did not come. */
  takeMergeTurn(key: string): Promise<boolean> {
    return this.mergeTurns.take(key, MERGE_TURN_HOLD_MS, MERGE_TURN_WAIT_MS);
  }

  endMergeTurn(key: string): void {
    this.mergeTurns.end(key);
  }

  /** Delivers everything waiting now, delays and backoffs included (tests, operators); then re-arms the alarm. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.flush(Number.POSITIVE_INFINITY);
    // The vault's classifications too, and what they decided.
    await this.classify(Number.POSITIVE_INFINITY);
    await this.flush(Number.POSITIVE_INFINITY);
    await this.scheduleAlarm();
  }

  /**
   * The cron's and the registration's call: the project's reconciliation has a cycle scheduled (the first
   * after `delayMs` when none is); returns when it is due.
   */
  async armReconciliation(
    project: string,
    delayMs = 0,
    supervisorPeriodMs = DEFAULT_SUPERVISOR_PERIOD_MS,
  ): Promise<number> {
    const now = Date.now();
    const nextAt = this.reconciliation.arm(project, now, now + delayMs);
    // The agents' schedules and the supervisor ride on the same arming: the cron's call reaches every project.
    this.agentJobs.armSchedules(project, now);
    this.supervisor.arm(project, now, supervisorPeriodMs);
    await this.scheduleAlarm();
    return nextAt;
  }

  /** Runs the supervisor's checks now (operators, tests), then keeps to its period (./supervisor.ts). */
  async superviseNow(
    project: string,
    periodMs = DEFAULT_SUPERVISOR_PERIOD_MS,
  ): Promise<SupervisorRun | null> {
    this.supervisor.arm(project, Date.now(), periodMs);
    const run = await this.supervisor.runIfDue(this.env, Date.now(), this.supervisorHooks(), true);
    await this.supervisor.drain(this.env);
    await this.scheduleAlarm();
    return run;
  }

  /** The supervisor's findings that stand, and when it checked. */
  health(): Health {
    return this.supervisor.health();
  }

  private supervisorHooks(): SupervisorHooks {
    return {
      own: () => ({ jobs: this.store.open(), spentTodayUsd: this.store.daySpendUsd(utcDay(Date.now())) }),
      enqueue: (request) => this.enqueue(request),
    };
  }

  /** Checks the agents' schedules now (operators, tests), queueing the runs that are due. */
  async checkAgentSchedules(project: string): Promise<ScheduleCheck | null> {
    this.agentJobs.armSchedules(project, Date.now());
    const outcome = await this.agentJobs.runSchedulesIfDue(Date.now(), true);
    await this.scheduleAlarm();
    return outcome;
  }

  /** Runs a reconciliation cycle now (operators, tests, benchmarks), then keeps to the period. */
  async reconcileNow(project: string): Promise<CycleOutcome | null> {
    this.reconciliation.arm(project, Date.now());
    const outcome = await this.reconciliation.runIfDue(this.env, Date.now(), true);
    await this.scheduleAlarm();
    return outcome;
  }

  override async alarm(): Promise<void> {
    this.expireLeases(Date.now());
    this.vault.expireDue(this.projectName(), Date.now());
    // A grace period may have ended: waiting claims look again.
    this.wake();
    await this.flush();
    // In the background: a slow forge holds neither this alarm nor the outbox's next one. Never throws: a
    // failing forge reschedules its own cycle.
    const cycle = this.reconciliation.runIfDue(this.env, Date.now());
    this.ctx.waitUntil(cycle.then(() => this.scheduleAlarm()));
    // Likewise the agents' schedules, which read the catalog from the forge. Never throws.
    const schedules = this.agentJobs.runSchedulesIfDue(Date.now());
    this.ctx.waitUntil(schedules.then(() => this.scheduleAlarm()));
    // And the supervisor's checks, and its forge issues. Never throws.
    const supervised = this.supervisor.runIfDue(this.env, Date.now(), this.supervisorHooks());
    this.ctx.waitUntil(supervised.then(() => this.scheduleAlarm()));
    await this.scheduleAlarm();
  }

  // --- leases ------------------------------------------------------------------------------------------------

  private select(runnerId: string, holding: readonly string[], now: number) {
    const meta = this.store.meta();
    if (!meta) return null;
    const prefix = `${meta.project}#`;
    const held = new Set(
      holding.filter((ref) => ref.startsWith(prefix)).map((ref) => Number(ref.slice(prefix.length))),
    );
    // Past the daily cap no session or agent run starts (work already leased finishes; reaps still run).
    const paused = dailyCapReached(this.store.daySpendUsd(utcDay(now)), meta.policy.budget) !== null;
    const open = this.store
      .open()
      .filter((job) => !paused || job.status === "leased" || !spendsBudget(job.kind));
    return selectJob(open, { runnerId, holding: held }, now, meta.policy.parallel);
  }

  private lease(runnerId: string, holding: readonly string[]): Claim | null {
    const now = Date.now();
    this.expireLeases(now);
    return this.ctx.storage.transactionSync(() => {
      const meta = this.store.meta();
      const job = this.select(runnerId, holding, now);
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
      this.recordJob(meta.project, leased, now);
      this.agentJobs.leased(job, now);
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
  private confirm(project: string, job: StoredJob, now: number): StoredJob {
    if (job.confirmed) return job;
    const runnerId = job.runnerId ?? "";
    if (isSession(job.kind)) {
      this.recordIssueEvent(project, job, `job:${job.id}:${job.attempt}:dispatched`, now, {
        type: "dispatched",
        jobId: job.id,
        runnerId,
        attempt: job.attempt,
      });
    }
    return { ...job, confirmed: true };
  }

  /**
   * The job under the caller's lease. 403 when its lease belongs (or last belonged) to another runner; 409 when
   * the token is not the job's current lease: it expired, was requeued, or the job was never leased to it.
   */
  private fence(jobId: string, runnerId: string, leaseToken: string, now: number) {
    this.expireLeases(now);
    const meta = this.store.meta();
    const job = this.store.byId(jobId);
    if (!meta || !job) return refuse(404, `job ${jobId} is unknown`);
    if (job.runnerId !== runnerId) return refuse(403, `job ${jobId} is not leased to this runner`);
    if (job.leaseToken !== leaseToken) return refuse(409, `the lease on job ${jobId} is not current`);
    return { ok: true as const, job, project: meta.project, policy: meta.policy };
  }

  /** Also run before every lease decision: the alarm set for the expiry is due, and delivers what this writes. */
  private expireLeases(now: number): void {
    const meta = this.store.meta();
    if (!meta) return;
    const expired = expiredLeases(this.store.leased(), now);
    if (expired.length === 0) return;
    this.ctx.storage.transactionSync(() => {
      // An expired lease's token is void at once: its runner's late calls are fenced off.
      for (const job of expired) {
        this.loseLease(meta.project, { ...job, leaseToken: null }, "lease expired", now, meta.policy);
      }
    });
    this.wake();
  }

  private loseLease(
    project: string,
    job: StoredJob,
    cause: string,
    now: number,
    policy: ProjectPolicy,
    runnerGone = false,
  ): void {
    const next = afterLostLease(job, cause, now, policy, runnerGone);
    if (next.action !== "requeue") {
      this.end(project, job, next.action === "fail" ? next.reason : null, now);
      return;
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
    this.recordJob(project, requeued, now);
    this.agentJobs.requeued(job, now);
  }

  /** Ends a job that will not run again: failed with a reason (its issue's session fails too), else cancelled. */
  private end(project: string, job: StoredJob, reason: string | null, now: number): void {
    const ended: StoredJob = { ...job, status: reason === null ? "cancelled" : "failed", updatedAt: now };
    this.store.save(ended);
    this.recordJob(project, ended, now);
    this.agentJobs.ended(project, job, reason ?? "cancelled", now);
    if (reason !== null && isSession(job.kind)) {
      this.recordIssueEvent(project, job, `job:${job.id}:failed`, now, {
        type: "phase",
        phase: "failed",
        jobId: job.id,
        attempt: job.attempt,
        reason: reason.slice(0, MAX_REASON),
      });
    }
  }

  // --- waiting -----------------------------------------------------------------------------------------------

  private nextWake(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /**
   * A usage report: in the project's daily spend and D1's usage (a re-sent figure replaces the earlier one,
   * per session and job attempt); the record's id.
   */
  private recordUsage(
    project: string,
    job: StoredJob,
    event: Extract<RunnerEvent, { kind: "usage" }>,
    now: number,
  ): string {
    const record = usageRecord(project, job, event, now);
    this.recordD1(record, now);
    this.store.recordSpend(record.row.id, job.number, utcDay(now), event.usage);
    return record.row.id;
  }

  // --- outbox ------------------------------------------------------------------------------------------------

  private recordJob(project: string, job: StoredJob, now: number): void {
    this.recordD1(jobRecord(project, job), now);
  }

  /** A record joins the batch already waiting, or starts one. */
  private recordD1(record: JobRecord, now: number): void {
    const batch = this.outbox.nextAt([CHANNELS.d1]);
    this.outbox.enqueue(CHANNELS.d1, record, batch ?? now + RECORD_DELAY_MS);
  }

  private recordIssueEvent(project: string, job: StoredJob, id: string, now: number, event: LifecycleEvent) {
    const envelope: EventEnvelope = {
      id,
      project,
      number: job.number,
      cause: { kind: "job", id: job.id },
      event,
    };
    this.outbox.enqueue(CHANNELS.issue, envelope, now);
  }

  /** Delivers the rows due by `horizon` (now by default); one run at a time, a caller mid-run joins it. */
  private flush(horizon?: number): Promise<void> {
    // On its own: a slow classification holds back no job event.
    this.ctx.waitUntil(this.classify(horizon));
    this.flushing ??= (async () => {
      const d1 = (rows: OutboxRow[]) =>
        writeJobRecords(
          this.env.DB,
          rows.map((r) => JSON.parse(r.payload) as JobRecord),
        );
      await deliverInOrder(this.ctx.storage, this.outbox, [CHANNELS.d1], D1_BATCH, d1, horizon);
      // Strictly in order: an issue must hear `dispatched` before the phase that ends the session.
      await deliverInOrder(
        this.ctx.storage,
        this.outbox,
        [CHANNELS.issue],
        1,
        async (rows) => {
          for (const row of rows) {
            const envelope = JSON.parse(row.payload) as EventEnvelope;
            const result = await issueStub(this.env, envelope.project, envelope.number).apply(envelope);
            // Sending an invalid event again cannot help; it is a bug to see in the logs, not to block the queue.
            if (result.outcome === "invalid") {
              console.error(
                JSON.stringify({ msg: "job event refused", id: envelope.id, reason: result.reason }),
              );
            }
          }
        },
        horizon,
      );
      const project = this.store.meta()?.project;
      if (project) await this.agentJobs.deliver(project, horizon);
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Classifies the vault's new items, one run at a time; what the verdicts decided goes out after. */
  private classify(horizon?: number): Promise<void> {
    this.classifying ??= this.vault
      .deliver(this.env, this.projectName(), horizon)
      .then((classified) => (classified ? this.deliverSoon() : undefined))
      // The rows stay in the outbox; the alarm tries again.
      .catch((error: unknown) =>
        console.error(JSON.stringify({ msg: "vault delivery failed", error: String(error) })),
      )
      .finally(() => {
        this.classifying = null;
      });
    return this.classifying;
  }

  /** `floor`: the outbox's rows are being delivered now; the alarm is their safety net from then on. */
  private async scheduleAlarm(floor?: number): Promise<void> {
    await armAlarm(this.ctx.storage, [
      outboxAlarm(this.outbox.nextAt(Object.values(CHANNELS)), floor),
      nextDeadline(this.store.deadlineFields(), Date.now()),
      this.reconciliation.nextAt(),
      this.agentJobs.nextScheduleAt(),
      this.vault.nextExpiry(),
      this.supervisor.nextAt(),
    ]);
  }

  /** This call wrote outbox rows: they go out now, not one alarm later. */
  private deliverSoon(): Promise<void> {
    return deliverSoon(
      this.ctx,
      (floor) => this.scheduleAlarm(floor),
      () => this.flush(),
    );
  }
}

const refuse = (status: LeaseRefusal["status"], error: string): LeaseRefusal => ({
  ok: false,
  status,
  error,
});

function jobRecord(project: string, job: StoredJob): JobRecord {
  return {
    table: "jobs",
    row: {
      id: job.id,
      projectId: project,
      number: job.number,
      kind: job.kind,
      status: job.status,
      attempt: job.attempt,
      runnerId: job.runnerId,
      createdAt: job.createdAt,
      updatedAt: job.updatedAt,
    },
  };
}

function sessionRecord(
  project: string,
  job: StoredJob,
  runnerId: string,
  event: Extract<RunnerEvent, { kind: "session" }>,
  now: number,
): JobRecord {
  return {
    table: "worker_sessions",
    row: {
      sessionId: event.sessionId,
      projectId: project,
      number: job.number,
      runnerId,
      iteration: job.spec.iteration,
      worktree: event.worktree,
      branch: job.branch ?? job.spec.branch,
      startedAt: now,
      updatedAt: now,
    },
  };
}

function usageRecord(
  project: string,
  job: StoredJob,
  event: Extract<RunnerEvent, { kind: "usage" }>,
  now: number,
): Extract<JobRecord, { table: "usage" }> {
  const { usage } = event;
  return {
    table: "usage",
    // One row per session per job attempt: a re-sent report replaces the figures instead of adding to them.
    row: {
      id: `${job.id}:${job.attempt}:${event.sessionId}`,
      projectId: project,
      number: job.number,
      iteration: job.spec.iteration,
      sessionId: event.sessionId,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: usage.cacheReadTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      usd: usage.usd,
      turns: usage.turns,
      at: now,
    },
  };
}

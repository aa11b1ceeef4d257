/**
 * One Durable Object per project, a facade over its concerns, each a module built here with what it needs: the
 * job queue, its leases and what runners report under them (./jobs/); agent runs (./agents/); the vault; the
 * reconciliation, the mirror's backfill; the supervisor (./supervisor/); the merge queue; the watchdog's pulse.
 * Every state change is written with the records it causes (./records.ts) in one synchronous transaction and
 * sent from the outbox (./delivery.ts); the one alarm is the safety net for that, expires leases and vault
 * items, and starts reconciliation, the backfill, the agents' schedules and the supervisor when due.
 */
import { DurableObject } from "cloudflare:workers";
import type { AgentTrigger } from "../../src/agents/triggers.ts";
import type {
  AgentRunRequest,
  EnqueueRequest,
  ProjectObject,
  VaultDecideRequest,
  VaultRequest,
  VaultSettle,
} from "../../src/contracts/project-object.ts";
import type { Env } from "../../src/env.ts";
import { loadProject, type Project } from "../../src/projects/store.ts";
import type { CompleteRequest, FailRequest } from "../../src/runner-api/contract.ts";
import type { ReportItem } from "../../src/runner-api/report-contract.ts";
import type { ModelUsage } from "../../src/usage/sources.ts";
import { Outbox } from "../shared/outbox.ts";
import { Wakeups } from "../shared/wakeups.ts";
import { AgentJobs } from "./agents/agent-jobs.ts";
import { Backfill } from "./backfill.ts";
import { ProjectDelivery } from "./delivery.ts";
import { JobStore } from "./jobs/job-store.ts";
import { Leases } from "./jobs/leases.ts";
import { JobQueue } from "./jobs/queue.ts";
import { RunnerReports } from "./jobs/runner-reports.ts";
import { MergeQueueBook } from "./merge-queue.ts";
import { Pulse } from "./pulse.ts";
import { Reconciliation } from "./reconciliation.ts";
import { ProjectRecords } from "./records.ts";
import { SERVING_WINDOW_MS } from "./supervisor/snapshot.ts";
import { DEFAULT_SUPERVISOR_PERIOD_MS, Supervisor, type SupervisorHooks } from "./supervisor/supervisor.ts";
import { Vault } from "./vault.ts";

export class ProjectDO extends DurableObject<Env> implements ProjectObject {
  private readonly store = new JobStore(this.ctx.storage.sql);
  private readonly outbox = new Outbox(this.ctx.storage.sql);
  private readonly waiters = new Wakeups();
  private readonly leases: Leases;
  private readonly queue: JobQueue;
  private readonly reports: RunnerReports;
  private readonly agentJobs: AgentJobs;
  private readonly vault: Vault;
  private readonly reconciliation = new Reconciliation(this.ctx.storage.sql);
  private readonly backfill = new Backfill(this.ctx.storage.sql, this.outbox);
  private readonly supervisor = new Supervisor(this.ctx.storage, this.outbox);
  private readonly delivery: ProjectDelivery;
  private readonly merges = new MergeQueueBook(this.ctx.storage, this.outbox, this.env, () => this.delivery);
  private readonly vitals = new Pulse(this.ctx.storage.sql);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const { storage } = ctx;
    const { store, outbox, reconciliation, backfill, supervisor, waiters, merges } = this;
    const records = new ProjectRecords(outbox, store);
    const project = () => this.projectName();
    const vault = new Vault(storage, outbox, {
      records,
      agentOutput: (requester, decision, now) => this.agentJobs.heldOutputDecided(requester, decision, now),
    });
    const start = (request: AgentRunRequest) => this.startAgentRun(request);
    const agentJobs = new AgentJobs({ env, storage, outbox, store, records, vault, project, start });
    const concerns = { store, agentJobs, vault, reconciliation, backfill, supervisor, merges };
    const delivery = new ProjectDelivery(ctx, env, outbox, concerns, project);
    const leases = new Leases(storage, store, records, waiters, agentJobs);
    this.queue = new JobQueue(storage, store, records, leases, waiters, agentJobs);
    this.reports = new RunnerReports(storage, env, { ...concerns, records, leases, waiters, delivery });
    this.agentJobs = agentJobs;
    this.vault = vault;
    this.delivery = delivery;
    this.leases = leases;
    // After a crash between a commit and its setAlarm, the next wake-up re-arms the alarm.
    ctx.blockConcurrencyWhile(() => this.delivery.arm());
  }

  // --- the job queue (./jobs/) ---------------------------------------------------------------------------------

  async enqueue(request: EnqueueRequest) {
    const result = this.queue.enqueue(request, Date.now());
    // The job's record is delivered by the alarm, with the others of the next second.
    await this.delivery.arm();
    return result;
  }

  async cancel(number: number) {
    const cancelled = this.queue.cancel(number, Date.now());
    await this.delivery.soon();
    return { cancelled };
  }

  claim(runnerId: string, holding: readonly string[], waitMs: number) {
    return this.queue.claim(runnerId, holding, waitMs, () => this.delivery.soon());
  }

  waitForJob(runnerId: string, holding: readonly string[], waitMs: number) {
    return this.queue.waitForJob(runnerId, holding, waitMs);
  }

  report(runnerId: string, items: readonly ReportItem[]) {
    return this.reports.report(runnerId, items);
  }

  fireStep(jobId: string, runnerId: string, leaseToken: string, step: string) {
    return this.reports.fireStep(jobId, runnerId, leaseToken, step);
  }

  complete(jobId: string, runnerId: string, request: CompleteRequest) {
    return this.reports.complete(jobId, runnerId, request);
  }

  fail(jobId: string, runnerId: string, request: FailRequest) {
    return this.reports.fail(jobId, runnerId, request);
  }

  agentLease(jobId: string, runnerId: string, leaseToken: string) {
    return this.reports.agentLease(jobId, runnerId, leaseToken);
  }

  /** Its runner was revoked: the leases it holds here are void at once and their jobs requeue for others. */
  async dropRunner(runnerId: string) {
    const requeued = this.leases.dropRunner(runnerId, Date.now());
    if (requeued > 0) await this.delivery.soon();
    return { requeued };
  }

  jobs(limit = 100) {
    return this.queue.recent(limit);
  }

  issueSpendUsd(number: number) {
    return this.queue.issueSpendUsd(number);
  }

  recordModelUsage(call: ModelUsage) {
    return this.reports.modelUsage(this.projectName(), call, Date.now());
  }

  dispatchStatus() {
    return this.queue.dispatchStatus(Date.now());
  }

  joinMergeQueue(number: number, since: number, holdMs: number) {
    return this.merges.join(number, since, holdMs);
  }

  leaveMergeQueue(number: number, since: number) {
    return this.merges.leave(this.projectName(), number, since);
  }

  mergeQueue() {
    return this.merges.view();
  }

  // --- agents (./agents/) --------------------------------------------------------------------------------------

  async startAgentRun(request: AgentRunRequest) {
    const { jobId } = this.queue.startAgentRun(request, Date.now());
    await this.delivery.arm();
    return { runId: request.runId, jobId };
  }

  triggerAgents(project: Project, trigger: AgentTrigger, key: string) {
    return this.agentJobs.trigger(project, trigger, key);
  }

  forgetAgentCatalog() {
    this.agentJobs.forgetCatalog();
  }

  agentRun(runId: string) {
    return this.agentJobs.view(runId);
  }

  latestAgentRuns() {
    return this.agentJobs.latest();
  }

  recentAgentRuns(agent: string, limit = 50) {
    return this.agentJobs.recent(agent, limit);
  }

  /** Checks the agents' schedules now (operators, tests), queueing the runs that are due. */
  async checkAgentSchedules(project: string) {
    this.agentJobs.armSchedules(project, Date.now());
    const outcome = await this.agentJobs.runSchedulesIfDue(Date.now(), true);
    await this.delivery.arm();
    return outcome;
  }

  // --- the vault (./vault.ts) ----------------------------------------------------------------------------------

  async vaultRequest(request: VaultRequest) {
    const project = this.projectName();
    const settings = (await loadProject(this.env, project))?.settings;
    if (!settings) throw new Error(`project ${project} is not registered`);
    const { id } = this.vault.request(project, request, settings.vault.expiryMs, Date.now());
    await this.delivery.soon();
    return { id };
  }

  async vaultDecide(id: string, request: VaultDecideRequest) {
    const result = this.vault.decide(this.projectName(), id, request, Date.now());
    if (result.ok) await this.delivery.soon();
    return result;
  }

  vaultItem(id: string) {
    return this.vault.head(id);
  }

  approvedVaultPayload(id: string) {
    return this.vault.approvedPayload(id);
  }

  async vaultSettle(id: string, settle: VaultSettle) {
    if (this.vault.settle(this.projectName(), id, settle, Date.now())) await this.delivery.soon();
  }

  // --- reconciliation and the supervisor -----------------------------------------------------------------------

  /** The cron's and the registration's call: a reconciliation cycle due (after `delayMs` when none is); when. */
  async armReconciliation(project: string, delayMs = 0, supervisorPeriodMs = DEFAULT_SUPERVISOR_PERIOD_MS) {
    const now = Date.now();
    const nextAt = this.reconciliation.arm(project, now, now + delayMs);
    // The agents' schedules and the supervisor ride on the same arming: the cron's call reaches every project.
    this.agentJobs.armSchedules(project, now);
    this.supervisor.arm(project, now, supervisorPeriodMs);
    await this.delivery.arm();
    return nextAt;
  }

  /** Runs a reconciliation cycle now (operators, tests, benchmarks), then keeps to the period. */
  async reconcileNow(project: string) {
    this.reconciliation.arm(project, Date.now());
    const outcome = await this.reconciliation.runIfDue(this.env, Date.now(), true);
    this.vitals.reconciled(outcome, Date.now());
    await this.delivery.arm();
    return outcome;
  }

  /** The mirror's backfill (./backfill.ts): `start` one unless one is under way; `step` one step now, awaited. */
  async backfillMirror(project: string, options: { start?: boolean; step?: boolean } = {}) {
    if (options.start) this.backfill.start(project, Date.now());
    if (options.step) await this.backfill.runIfDue(this.env, Date.now(), true);
    await this.delivery.arm();
    return this.backfill.status();
  }

  /** Runs the supervisor's checks now (operators, tests), then keeps to its period (./supervisor/). */
  async superviseNow(project: string, periodMs = DEFAULT_SUPERVISOR_PERIOD_MS) {
    this.supervisor.arm(project, Date.now(), periodMs);
    const run = await this.supervisor.runIfDue(this.env, Date.now(), this.supervisorHooks, true);
    await this.supervisor.drain(this.env);
    await this.delivery.arm();
    return run;
  }

  health() {
    return { ...this.supervisor.health(), pulse: this.vitals.read() };
  }

  drain() {
    return this.delivery.drain();
  }

  override async alarm(): Promise<void> {
    this.vitals.alarmRan(Date.now());
    this.leases.expire(Date.now());
    this.vault.expireDue(this.projectName(), Date.now());
    this.merges.expireDue(this.projectName(), Date.now());
    // A grace period may have ended: waiting claims look again.
    this.queue.wakeForQueued();
    await this.delivery.flush();
    const now = Date.now(); // Then in the background, each on its own (a slow forge holds up nothing); none throws.
    const cycles = [
      this.reconciliation.runIfDue(this.env, now).then((o) => this.vitals.reconciled(o, Date.now())),
      this.backfill.runIfDue(this.env, now),
      this.agentJobs.runSchedulesIfDue(now),
      this.supervisor.runIfDue(this.env, now, this.supervisorHooks),
    ];
    for (const cycle of cycles) this.ctx.waitUntil(cycle.then(() => this.delivery.arm()));
    await this.delivery.arm();
  }

  /** The project this object is for: the name it is addressed by (idFromName), else the project of its jobs. */
  private projectName(): string {
    return this.ctx.id.name ?? this.store.meta()?.project ?? "";
  }

  private readonly supervisorHooks: SupervisorHooks = {
    own: () => this.queue.supervised(Date.now(), SERVING_WINDOW_MS),
    enqueue: (request) => this.enqueue(request),
  };
}

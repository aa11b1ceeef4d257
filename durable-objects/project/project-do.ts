/**
 * One Durable Object per project, a facade over its concerns, each a module of its own built here with what
 * it needs: the job queue (./jobs/queue.ts), its leases (./jobs/leases.ts) and what runners report under them
 * (./jobs/runner-reports.ts); agent runs (./agents/); the vault (./vault.ts); reconciliation
 * (./reconciliation.ts); the supervisor (./supervisor/); merge turns (./merge-turns.ts). Every state change is
 * written with the records it causes (./records.ts) in one synchronous transaction and sent from the outbox
 * (./delivery.ts); the object's one alarm is the safety net for that, expires leases and vault items, and
 * starts reconciliation, the agents' schedules and the supervisor when they are due.
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
import { itemHead } from "../../src/domain/vault.ts";
import type { Env } from "../../src/env.ts";
import { supervisorSettingsSchema } from "../../src/projects/config.ts";
import { loadProject, type Project } from "../../src/projects/store.ts";
import type { CompleteRequest, FailRequest, RunnerEvent } from "../../src/runner-api/contract.ts";
import type { ModelUsage } from "../../src/usage/sources.ts";
import { Outbox } from "../shared/outbox.ts";
import { Wakeups } from "../shared/wakeups.ts";
import { AgentJobs } from "./agents/agent-jobs.ts";
import { ProjectDelivery } from "./delivery.ts";
import { JobStore } from "./jobs/job-store.ts";
import { Leases } from "./jobs/leases.ts";
import { JobQueue } from "./jobs/queue.ts";
import { RunnerReports } from "./jobs/runner-reports.ts";
import { MERGE_TURN_HOLD_MS, MERGE_TURN_WAIT_MS, MergeTurns } from "./merge-turns.ts";
import { Reconciliation } from "./reconciliation.ts";
import { ProjectRecords } from "./records.ts";
import { SERVING_WINDOW_MS } from "./supervisor/snapshot.ts";
import { Supervisor, type SupervisorHooks } from "./supervisor/supervisor.ts";
import { Vault } from "./vault.ts";

/** The supervisor's period until the project's settings say otherwise (its first check reads them). */
const DEFAULT_SUPERVISOR_PERIOD_MS = supervisorSettingsSchema.parse({}).periodMs;

export class ProjectDO extends DurableObject<Env> implements ProjectObject {
  private readonly store: JobStore;
  private readonly waiters = new Wakeups();
  private readonly leases: Leases;
  private readonly queue: JobQueue;
  private readonly reports: RunnerReports;
  private readonly agentJobs: AgentJobs;
  private readonly vault: Vault;
  private readonly reconciliation: Reconciliation;
  private readonly supervisor: Supervisor;
  private readonly delivery: ProjectDelivery;
  private readonly mergeTurns = new MergeTurns();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const { storage } = ctx;
    const store = new JobStore(storage.sql);
    const outbox = new Outbox(storage.sql);
    const records = new ProjectRecords(outbox, store);
    const project = () => this.projectName();
    const vault = new Vault(storage, outbox, {
      records,
      agentOutput: (requester, decision, now) => this.agentJobs.heldOutputDecided(requester, decision, now),
    });
    const start = (request: AgentRunRequest) => this.startAgentRun(request);
    const agentJobs = new AgentJobs({ env, storage, outbox, store, records, vault, project, start });
    const reconciliation = new Reconciliation(storage.sql);
    const supervisor = new Supervisor(storage, outbox);
    const concerns = { store, agentJobs, vault, reconciliation, supervisor };
    const delivery = new ProjectDelivery(ctx, env, outbox, concerns, project);
    const { waiters } = this;
    const leases = new Leases(storage, store, records, waiters, agentJobs);
    this.queue = new JobQueue(storage, store, records, leases, waiters, agentJobs);
    this.reports = new RunnerReports(storage, env, { ...concerns, records, leases, waiters, delivery });
    this.store = store;
    this.agentJobs = agentJobs;
    this.vault = vault;
    this.reconciliation = reconciliation;
    this.supervisor = supervisor;
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

  heartbeat(jobId: string, runnerId: string, leaseToken: string) {
    return this.reports.heartbeat(jobId, runnerId, leaseToken);
  }

  fireStep(jobId: string, runnerId: string, leaseToken: string, step: string) {
    return this.reports.fireStep(jobId, runnerId, leaseToken, step);
  }

  events(jobId: string, runnerId: string, leaseToken: string, events: readonly RunnerEvent[]) {
    return this.reports.events(jobId, runnerId, leaseToken, events);
  }

  complete(jobId: string, runnerId: string, request: CompleteRequest) {
    return this.reports.complete(jobId, runnerId, request);
  }

  fail(jobId: string, runnerId: string, request: FailRequest) {
    return this.reports.fail(jobId, runnerId, request);
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

  /** The project's turn to merge, for the merge effect `key` (see ./merge-turns.ts); false if it did not come. */
  takeMergeTurn(key: string) {
    return this.mergeTurns.take(key, MERGE_TURN_HOLD_MS, MERGE_TURN_WAIT_MS);
  }

  endMergeTurn(key: string) {
    this.mergeTurns.end(key);
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
    const item = this.vault.item(id);
    return item && itemHead(item);
  }

  approvedVaultPayload(id: string) {
    return this.vault.approvedPayload(id);
  }

  async vaultSettle(id: string, settle: VaultSettle) {
    if (this.vault.settle(this.projectName(), id, settle, Date.now())) await this.delivery.soon();
  }

  // --- reconciliation and the supervisor -----------------------------------------------------------------------

  /**
   * The cron's and the registration's call: the project's reconciliation has a cycle scheduled (the first
   * after `delayMs` when none is); returns when it is due.
   */
  async armReconciliation(project: string, delayMs = 0, periodMs = DEFAULT_SUPERVISOR_PERIOD_MS) {
    const now = Date.now();
    const nextAt = this.reconciliation.arm(project, now, now + delayMs);
    // The agents' schedules and the supervisor ride on the same arming: the cron's call reaches every project.
    this.agentJobs.armSchedules(project, now);
    this.supervisor.arm(project, now, periodMs);
    await this.delivery.arm();
    return nextAt;
  }

  /** Runs a reconciliation cycle now (operators, tests, benchmarks), then keeps to the period. */
  async reconcileNow(project: string) {
    this.reconciliation.arm(project, Date.now());
    const outcome = await this.reconciliation.runIfDue(this.env, Date.now(), true);
    await this.delivery.arm();
    return outcome;
  }

  /** Runs the supervisor's checks now (operators, tests), then keeps to its period (./supervisor/). */
  async superviseNow(project: string, periodMs = DEFAULT_SUPERVISOR_PERIOD_MS) {
    this.supervisor.arm(project, Date.now(), periodMs);
    const run = await this.supervisor.runIfDue(this.env, Date.now(), this.supervisorHooks(), true);
    await this.supervisor.drain(this.env);
    await this.delivery.arm();
    return run;
  }

  health() {
    return this.supervisor.health();
  }

  drain() {
    return this.delivery.drain();
  }

  override async alarm(): Promise<void> {
    this.leases.expire(Date.now());
    this.vault.expireDue(this.projectName(), Date.now());
    // A grace period may have ended: waiting claims look again.
    this.waiters.wake();
    await this.delivery.flush();
    // In the background, each on its own: a slow forge holds neither this alarm nor the outbox's next one.
    // None throws: a failing forge reschedules its own cycle.
    const now = Date.now();
    const cycles = [
      this.reconciliation.runIfDue(this.env, now),
      this.agentJobs.runSchedulesIfDue(now),
      this.supervisor.runIfDue(this.env, now, this.supervisorHooks()),
    ];
    for (const cycle of cycles) this.ctx.waitUntil(cycle.then(() => this.delivery.arm()));
    await this.delivery.arm();
  }

  /** The project this object is for: the name it is addressed by (idFromName), else the project of its jobs. */
  private projectName(): string {
    return this.ctx.id.name ?? this.store.meta()?.project ?? "";
  }

  private supervisorHooks(): SupervisorHooks {
    return {
      own: () => this.queue.supervised(Date.now(), SERVING_WINDOW_MS),
      enqueue: (request) => this.enqueue(request),
    };
  }
}

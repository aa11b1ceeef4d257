/**
 * What a runner says about a job it holds, each call fenced by the job's lease (./leases.ts): heartbeats that
 * keep the lease (the first confirms the attempt), reports while it runs (its session, usage against the
 * issue's budget, pushes, progress notes, activity), the firing of a dangerous step's vault approval, and the
 * job's end (complete, or fail: retryable loses the lease, otherwise the job fails).
 */
import type { JobReport, LeaseRefusal, ProjectPolicy } from "../../../src/contracts/project-object.ts";
import { checkActionClaim } from "../../../src/domain/action-claims.ts";
import { isSession, leaseTerm } from "../../../src/domain/job-queue.ts";
import type { Env } from "../../../src/env.ts";
import { issueStub } from "../../../src/issue-stub.ts";
import { log } from "../../../src/log.ts";
import { loadSecrets } from "../../../src/projects/store.ts";
import type {
  ActivityItem,
  CompleteRequest,
  FailRequest,
  FireResponse,
  RunnerEvent,
} from "../../../src/runner-api/contract.ts";
import type { ReportItem } from "../../../src/runner-api/report-contract.ts";
import type { ModelUsage } from "../../../src/usage/sources.ts";
import type { Wakeups } from "../../shared/wakeups.ts";
import type { AgentJobs } from "../agents/agent-jobs.ts";
import type { ProjectDelivery } from "../delivery.ts";
import type { ProjectRecords } from "../records.ts";
import type { Vault } from "../vault.ts";
import type { JobStore, StoredJob } from "./job-store.ts";
import { type Leases, MAX_REASON, refuse } from "./leases.ts";
import { WAKES_PER_JOB } from "./queue.ts";

type Done = Promise<{ ok: true } | LeaseRefusal>;

/** What a report's jobs leave to do once its transaction committed. */
type ReportOutput = {
  /** The outbox has news (a confirmation, events' records). */
  soon: boolean;
  /** Activity for the jobs' issues' pages. */
  notes: { project: string; number: number; jobId: string; activity: ActivityItem[] }[];
};

/** What the reports act on: the queue's state, and the concerns a report may touch. */
export type ReportTargets = {
  store: JobStore;
  records: ProjectRecords;
  leases: Leases;
  waiters: Wakeups;
  agentJobs: AgentJobs;
  vault: Vault;
  delivery: ProjectDelivery;
};

export class RunnerReports {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly t: ReportTargets,
  ) {}

  /**
   * A runner's report on jobs it holds (src/runner-api/report-contract.ts): each job fenced by its own lease
   * and refused alone, the renewals and events of all of them written in one transaction. A renewal keeps the
   * lease (the first confirms the attempt); events are accepted under the job's current or finishing lease.
   */
  async report(runnerId: string, items: readonly ReportItem[]): Promise<JobReport[]> {
    const now = Date.now();
    this.t.leases.expire(now);
    const out: ReportOutput = { soon: false, notes: [] };
    const meta = this.t.store.meta();
    const answers = this.storage.transactionSync(() =>
      items.map((item) => this.reportJob(runnerId, item, now, meta, out)),
    );
    // A confirmation wrote the issue's `dispatched`, events their records: out now. Renewals only move the deadline.
    if (out.soon) await this.t.delivery.soon();
    else await this.t.delivery.arm();
    // Informational: a page that misses it loses nothing the lifecycle needs.
    await Promise.all(
      out.notes.map(({ project, number, jobId, activity }) =>
        issueStub(this.env, project, number)
          .noteActivity(jobId, activity)
          .catch((error: unknown) => log.warn("activity not kept", { error: String(error) })),
      ),
    );
    return answers;
  }

  /**
   * The runner is about to run the dangerous step `step` of the job's action: its vault approval is spent now,
   * under the job's current lease, once per approval; asked again by the same attempt (a lost answer), it says
   * so again (vault.ts fireStep).
   */
  async fireStep(
    jobId: string,
    runnerId: string,
    leaseToken: string,
    step: string,
  ): Promise<({ ok: true } & FireResponse) | LeaseRefusal> {
    const now = Date.now();
    const fenced = this.t.leases.fence(jobId, runnerId, leaseToken, now);
    if (!fenced.ok) return fenced;
    const { job, project } = fenced;
    if (job.status !== "leased") return refuse(409, `the lease on job ${jobId} is not current`);
    const { approvedStep, approvedItem } = job.spec.action ?? {};
    if (approvedStep !== step || !approvedItem)
      return { ok: true, fired: false, reason: `job ${jobId} carries no vault approval of step ${step}` };
    const firing = { issue: job.number, step, jobId, attempt: job.attempt };
    const fired = this.t.vault.fireStep(project, approvedItem, firing, now);
    if (fired.fired) await this.t.delivery.soon();
    return { ok: true, ...fired };
  }

  /** Whether the caller holds an agent run's current lease (the run's read tools answer under it). */
  agentLease(
    jobId: string,
    runnerId: string,
    leaseToken: string,
  ): { ok: true; project: string } | LeaseRefusal {
    const fenced = this.t.leases.fence(jobId, runnerId, leaseToken, Date.now());
    if (!fenced.ok) return fenced;
    if (fenced.job.kind !== "agent") return refuse(403, `job ${jobId} is no agent run`);
    if (fenced.job.status !== "leased") return refuse(409, `job ${jobId} is ${fenced.job.status}`);
    return { ok: true, project: fenced.project };
  }

  /** What the runner reports while the job runs; accepted under the job's current or finishing lease. */
  async events(jobId: string, runnerId: string, leaseToken: string, events: readonly RunnerEvent[]): Done {
    const now = Date.now();
    const fenced = this.t.leases.fence(jobId, runnerId, leaseToken, now);
    if (!fenced.ok) return fenced;
    const { project, policy } = fenced;
    let job = fenced.job;
    this.storage.transactionSync(() => {
      if (job.status === "leased") job = this.t.leases.confirm(project, job, now);
      for (const event of events) job = this.apply(project, job, runnerId, event, policy.budget, now);
      this.t.store.save({ ...job, updatedAt: now });
    });
    await this.t.delivery.soon();
    const activity = events.flatMap((event) => (event.kind === "activity" ? event.items : []));
    if (activity.length > 0 && isSession(job.kind)) {
      // Informational: a page that misses it loses nothing the lifecycle needs.
      await issueStub(this.env, project, job.number)
        .noteActivity(job.id, activity.slice(-50))
        .catch((error: unknown) => log.warn("activity not kept", { error: String(error) }));
    }
    return { ok: true };
  }

  /**
   * The session ended a phase: the job is done and its issue hears the phase (unless it was cancelled). An
   * action session's claim is checked against the Worker's facts first: one that does not stand reaches the
   * issue as an escalation saying why (src/domain/action-claims.ts).
   */
  async complete(jobId: string, runnerId: string, request: CompleteRequest): Done {
    const refusal = await this.actionClaimRefusal(jobId, request);
    const now = Date.now();
    const fenced = this.t.leases.fence(jobId, runnerId, request.leaseToken, now);
    if (!fenced.ok) return fenced;
    const { project } = fenced;
    if (fenced.job.status !== "leased") return { ok: true };
    this.storage.transactionSync(() => {
      const job = this.t.leases.confirm(project, fenced.job, now);
      const done: StoredJob = { ...job, status: job.cancelled ? "cancelled" : "done", updatedAt: now };
      this.t.store.save(done);
      this.t.records.job(project, done, now);
      this.t.agentJobs.completed(project, job, request, now);
      if (!job.cancelled && isSession(job.kind)) {
        const sessionId = request.sessionId ?? job.sessionId;
        // The branch is the job's, never the runner's choice.
        const branch = job.spec.branch;
        const headSha = request.headSha ?? job.headSha;
        this.t.records.issueEvent(project, job, `job:${job.id}:complete`, now, {
          type: "phase",
          phase: request.phase,
          jobId: job.id,
          attempt: job.attempt,
          ...(request.reason !== undefined && { reason: request.reason }),
          ...(refusal && { refused: refusal.slice(0, MAX_REASON) }),
          ...(sessionId && { sessionId }),
          ...(branch && { branch }),
          ...(headSha && { headSha }),
          ...(request.summary && { summary: request.summary }),
          ...(!refusal && request.step && job.spec.action && { step: request.step }),
        });
      }
    });
    // Its slot is free: for one more job.
    this.t.waiters.wakeSome(WAKES_PER_JOB);
    await this.t.delivery.soon();
    return { ok: true };
  }

  /** Why an action session's terminal claim does not stand, or null (also for any other job). */
  private async actionClaimRefusal(jobId: string, request: CompleteRequest): Promise<string | null> {
    const job = this.t.store.byId(jobId);
    const action = job?.spec.action;
    if (!job || !action || (request.phase !== "done" && request.phase !== "vault")) return null;
    const facts = { formula: action.formula, items: this.t.vault.stepItems(job.number), missingSecrets: [] };
    if (!checkActionClaim(request, facts)) return null;
    // Why a step did not run, where the project lacks a secret it needs.
    const held = Object.keys((await loadSecrets(this.env, job.spec.project))?.actionSecrets ?? {});
    const missingSecrets = action.formula.secrets.filter((name) => !held.includes(name));
    return checkActionClaim(request, { ...facts, missingSecrets });
  }

  /** A retryable failure loses the lease like an expiry; any other fails the job and its issue's session. */
  async fail(jobId: string, runnerId: string, request: FailRequest): Done {
    const now = Date.now();
    const fenced = this.t.leases.fence(jobId, runnerId, request.leaseToken, now);
    if (!fenced.ok) return fenced;
    const { project, policy } = fenced;
    if (fenced.job.status !== "leased") return { ok: true };
    // Short enough that the attempt count after it survives the reason's limit.
    const cause = `runner failed: ${request.error.slice(0, MAX_REASON / 2)}`;
    this.storage.transactionSync(() => {
      // Reported by its runner: the attempt began, even if no heartbeat said so.
      const job = this.t.leases.confirm(project, fenced.job, now);
      if (request.retryable) this.t.leases.lose(project, job, cause, now, policy);
      else this.t.leases.end(project, job, job.cancelled ? null : cause, now);
    });
    // A slot is free, and a requeued job waits for this runner first.
    this.t.waiters.wakeSome(WAKES_PER_JOB, runnerId);
    await this.t.delivery.soon();
    return { ok: true };
  }

  /** A model call outside a runner (the Worker's critic): in its issue's spend and the day's, like a session's. */
  async modelUsage(project: string, call: ModelUsage, now: number): Promise<void> {
    const budget = this.t.store.meta()?.policy.budget;
    this.storage.transactionSync(() => {
      const id = this.t.records.modelUsage(project, call, now);
      const cause = { kind: "system", id: call.source } as const;
      if (call.number !== null && budget)
        this.t.records.overBudget(project, call.number, id, budget, cause, now);
    });
  }

  /** One job's part of a report, inside the transaction. */
  private reportJob(
    runnerId: string,
    item: ReportItem,
    now: number,
    meta: ReturnType<JobStore["meta"]>,
    out: ReportOutput,
  ): JobReport {
    const fenced = this.t.leases.check(item.jobId, runnerId, item.leaseToken, meta);
    if (!fenced.ok) return fenced;
    const { project, policy } = fenced;
    let job = fenced.job;
    const leased = job.status === "leased";
    const renew = item.heartbeat && leased;
    const stale = refuse(409, `job ${job.id} is ${job.status}`);
    if (!renew && item.events.length === 0) return stale;
    if (leased) {
      out.soon ||= !job.confirmed;
      job = this.t.leases.confirm(project, job, now);
    }
    for (const event of item.events) job = this.apply(project, job, runnerId, event, policy.budget, now);
    out.soon ||= item.events.length > 0;
    const leaseMs = leaseTerm(true, policy);
    if (renew) job = { ...job, leaseExpiresAt: now + leaseMs };
    this.t.store.save({ ...job, updatedAt: now });
    const activity = item.events.flatMap((event) => (event.kind === "activity" ? event.items : []));
    if (activity.length > 0 && isSession(job.kind))
      out.notes.push({ project, number: job.number, jobId: job.id, activity: activity.slice(-50) });
    // A finished job's events are kept, but its lease is not renewed.
    if (item.heartbeat && !leased) return stale;
    return renew
      ? { ok: true, lease: { leaseExpiresAt: now + leaseMs, leaseMs, cancelled: job.cancelled } }
      : { ok: true };
  }

  /** One report, inside the transaction: the job as it now stands. */
  private apply(
    project: string,
    job: StoredJob,
    runnerId: string,
    event: RunnerEvent,
    budget: ProjectPolicy["budget"],
    now: number,
  ): StoredJob {
    switch (event.kind) {
      case "session":
        if (isSession(job.kind)) this.t.records.session(project, job, runnerId, event, now);
        return { ...job, sessionId: event.sessionId };
      case "usage": {
        // An agent run's spend is the project's and its run's; a review run's also its reviewed issue's.
        const issue = this.t.agentJobs.chargedIssue(job);
        const id = this.t.records.usage(project, job, event, now, issue ?? job.number);
        this.t.agentJobs.spent(job);
        const cause = { kind: "job", id: job.id } as const;
        if (issue !== null) this.t.records.overBudget(project, issue, id, budget, cause, now);
        return job;
      }
      case "pushed":
        // A claim about the job's own branch only; the issue checks it against the forge's branch head.
        return event.branch === job.spec.branch
          ? { ...job, branch: event.branch, headSha: event.headSha }
          : job;
      case "progress":
        // An action's note, posted once on its issue: the id names the job attempt's note.
        if (job.spec.action) {
          this.t.records.issueEvent(project, job, `progress:${job.id}:${job.attempt}:${event.seq}`, now, {
            type: "reply",
            thread: job.number,
            text: "**Progress:**",
            // The session's words, within the reply's 2 000 characters.
            quote: { by: "Its session", text: event.text.slice(0, 2_000) },
          });
        }
        return job;
      // Logged by the Worker, which strips secrets; the issue keeps activity (above): nothing to keep here.
      case "log":
      case "activity":
        return job;
    }
  }
}

/**
 * The ProjectDO's agent runs as jobs of its queue: what an `agent` job means at each point of a job's life
 * (queued, leased, its usage, completed, requeued, ended), the check and the forge application of its
 * outputs (a dangerous one held in the vault), its schedules and forge-event triggers, and the review runs
 * among them. The ProjectDO owns the queue and calls here with one line at each lifecycle point; each call is
 * a no-op for a job that is not an agent run. Write methods run inside the ProjectDO's transaction.
 */

import { describeOutput, type VaultVerdict } from "../../../src/agents/held-outputs.ts";
import { agentRunRequest } from "../../../src/agents/runs.ts";
import type { AgentTrigger } from "../../../src/agents/triggers.ts";
import type {
  AgentRunRequest,
  AgentRunView,
  QueuedRuns,
  ScheduleCheck,
} from "../../../src/contracts/project-object.ts";
import type { Requester } from "../../../src/domain/vault.ts";
import type { Env } from "../../../src/env.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { loadProject, type Project } from "../../../src/projects/store.ts";
import type { CompleteRequest } from "../../../src/runner-api/contract.ts";
import { deliverInOrder, type Outbox } from "../../shared/outbox.ts";
import type { JobStore, StoredJob } from "../jobs/job-store.ts";
import type { ProjectRecords } from "../records.ts";
import type { Vault } from "../vault.ts";
import { EventRuns } from "./event-runs.ts";
import { agentTargets, applyAgentOutput } from "./forge-outputs.ts";
import { ReviewRuns } from "./review-runs.ts";
import { AGENT_CHANNELS, AgentRuns, type ApplyRow, type CheckRow, type HoldOutput } from "./runs.ts";
import { AgentSchedules, type ScheduleHooks } from "./schedules.ts";
import { TriageRuns } from "./triage-runs.ts";
import { AgentTriggers } from "./triggers.ts";

/** What the agent runs need of their ProjectDO. */
export type AgentJobsHost = {
  env: Env;
  storage: DurableObjectStorage;
  outbox: Outbox;
  store: JobStore;
  vault: Vault;
  /** The project the object is for. */
  project(): string;
  /** Usage reports (the project's spend and D1's usage) and events for issues. */
  records: Pick<ProjectRecords, "usage" | "envelope" | "overBudget">;
  /** Queues a run: its job and its run record (the ProjectDO's startAgentRun). */
  start(request: AgentRunRequest): Promise<unknown>;
};

export class AgentJobs {
  private readonly runs: AgentRuns;
  private readonly schedules: AgentSchedules;
  private readonly triggers: AgentTriggers;
  private readonly reviews: ReviewRuns;
  private readonly events: EventRuns;
  private readonly triages: TriageRuns;

  constructor(private readonly host: AgentJobsHost) {
    const { sql } = host.storage;
    this.runs = new AgentRuns(sql, host.outbox);
    this.schedules = new AgentSchedules(sql);
    this.events = new EventRuns(sql);
    this.triggers = new AgentTriggers(sql, this.runs, this.events);
    this.reviews = new ReviewRuns(sql);
    this.triages = new TriageRuns(sql);
  }

  // --- the job's lifecycle points ----------------------------------------------------------------------------

  /**
   * The run's job was just inserted: its run record (and its review binding, and for a forge event's run its
   * origin). Returns the jobs of the earlier event runs it supersedes (the caller ends those still queued).
   * Forgets runs before `pruneBefore`.
   */
  queued(request: AgentRunRequest, jobId: string, now: number, pruneBefore: number): string[] {
    const { runId, spec, origin } = request;
    // Kept as long as finished jobs are; each agent's latest run is kept whatever its age.
    this.runs.prune(pruneBefore);
    this.events.prune(pruneBefore);
    this.triages.prune();
    const run = { id: runId, agent: spec.agent.name, jobId, trigger: request.trigger };
    this.runs.queue({ ...run, outputs: request.outputs }, now);
    if (request.review) this.reviews.bind(runId, request.review);
    if (request.triage) this.triages.bind(runId, request.triage);
    if (!origin) return [];
    this.events.record(runId, jobId, origin, now);
    return this.events.jobsAbout(origin.agent, origin.number, runId);
  }

  /** The job was leased (again): its run is running. */
  leased(job: StoredJob, now: number): void {
    if (job.spec.agent) this.runs.running(job.spec.agent.runId, now);
  }

  /**
   * A usage report, already in the project's spend: an agent run's counts in the run's cost too. True for an
   * agent run, whose spend is the project's and never an issue's.
   */
  spent(job: StoredJob): boolean {
    if (!job.spec.agent) return false;
    this.runs.setCost(job.spec.agent.runId, this.host.store.jobSpendUsd(job.id));
    return true;
  }

  /** The issue a job's spend is charged to: its own, or a review run's reviewed issue; null: the project's. */
  chargedIssue(job: StoredJob): number | null {
    return job.spec.agent ? (this.reviews.of(job.spec.agent.runId)?.number ?? null) : job.number;
  }

  /** The runner completed the job: the run's usage and requested outputs are kept, or it ended as it says. */
  completed(project: string, job: StoredJob, request: CompleteRequest, now: number): void {
    if (!job.spec.agent) return;
    const { runId } = job.spec.agent;
    if (request.usage) {
      const sessionId = request.sessionId ?? job.sessionId ?? "agent";
      const usage = { kind: "usage", sessionId, usage: request.usage } as const;
      const issue = this.chargedIssue(job);
      const id = this.host.records.usage(project, job, usage, now, issue ?? job.number);
      this.spent(job);
      // A review run's final figures may take its issue over budget, as a session's report would.
      const budget = this.host.store.meta()?.policy.budget;
      const cause = { kind: "job", id: job.id } as const;
      if (issue !== null && budget) this.host.records.overBudget(project, issue, id, budget, cause, now);
    }
    if (job.cancelled) this.endRun(project, runId, "cancelled", now);
    else if (request.phase === "done") this.runs.reported(runId, request.outputs ?? [], now);
    else this.endRun(project, runId, `the run ended ${request.phase}: ${request.reason ?? ""}`, now);
  }

  /** The job (an agent run's `runId`, else null) is a run a forge event started: it spends their own budget. */
  isEventRun(runId: string | null): boolean {
    return runId !== null && this.events.isEventRun(runId);
  }

  /** The job (an agent run's `runId`, else null) is a triage run: it goes ahead of queued work (job-queue.ts). */
  isUrgent(runId: string | null): boolean {
    return runId !== null && this.triages.of(runId) !== null;
  }

  eventSpendUsd(day: string): number {
    return this.events.daySpendUsd(day);
  }

  /** The job went back to the queue: its run waits again. */
  requeued(job: StoredJob, now: number): void {
    if (job.spec.agent) this.runs.requeued(job.spec.agent.runId, now);
  }

  /** The job ended without a completion (failed for good with `reason`, or cancelled). */
  ended(project: string, job: StoredJob, reason: string, now: number): void {
    if (job.spec.agent) this.endRun(project, job.spec.agent.runId, reason, now);
  }

  /** A review run's issue hears `review_failed`. */
  private endRun(project: string, runId: string, reason: string, now: number): void {
    this.runs.ended(runId, reason, now);
    const failed = this.reviews.failed(project, runId, `the reviewer's run failed: ${reason}`);
    if (failed) this.host.records.envelope(failed, now);
  }

  // --- outputs -----------------------------------------------------------------------------------------------

  /** Decides each completed run's outputs (reading their targets from the forge's mirror), then applies them. */
  async deliver(project: string, horizon?: number): Promise<void> {
    const { storage, outbox, env } = this.host;
    await deliverInOrder(
      storage,
      outbox,
      [AGENT_CHANNELS.check],
      1,
      async (rows) => {
        for (const row of rows) {
          const { runId } = JSON.parse(row.payload) as CheckRow;
          const targets = await agentTargets(env, project, this.runs.targetsOf(runId));
          const review = this.reviews.of(runId);
          const escalated = this.triages.of(runId)?.number;
          const context = { ...(review && { pullRequest: review.pr }), ...(escalated && { escalated }) };
          const settings = (await loadProject(env, project))?.settings;
          if (!settings) throw new Error(`project ${project} is not registered`);
          storage.transactionSync(() => {
            const now = Date.now();
            const hold = this.hold(project, settings.vault.expiryMs, now);
            const decisions = this.runs.decide(runId, targets, now, hold, context);
            // A review run without a valid review: its issue hears review_failed, never an approval.
            const failed = decisions && review && this.reviews.decided(project, runId, decisions);
            if (failed) this.host.records.envelope(failed, now);
          });
        }
      },
      horizon,
    );
    await deliverInOrder(
      storage,
      outbox,
      [AGENT_CHANNELS.apply],
      1,
      async (rows) => {
        for (const row of rows) {
          const { runId, index } = JSON.parse(row.payload) as ApplyRow;
          const decision = this.runs.accepted(runId, index);
          // A held output goes out only once its vault item fired: a row for one still waiting applies nothing.
          if (!decision || (decision.vault && this.host.vault.item(decision.vault)?.state !== "fired"))
            continue;
          const { output } = decision;
          const agent = this.runs.agentOf(runId) ?? "unknown";
          const ref = {
            key: `agent:${runId}:${index}`,
            runId,
            agent,
            review: this.reviews.of(runId),
            triage: this.triages.of(runId),
          };
          const refusal = await applyAgentOutput(env, project, ref, output);
          storage.transactionSync(() => this.runs.markApplied(runId, index, Date.now(), refusal));
        }
      },
      horizon,
    );
  }

  /** A dangerous output waits in the vault, requested in the check's transaction; its key is the output's. */
  private hold(project: string, expiryMs: number, now: number): HoldOutput {
    return ({ runId, agent, index, output }) =>
      this.host.vault.request(
        project,
        {
          key: `agent:${runId}:${index}`,
          kind: "agent_output",
          requester: { type: "agent_run", runId, output: index },
          title: `${agent} (run ${runId}) asks to ${describeOutput(output)}`.slice(0, 300),
          payload: { agent, runId, output },
        },
        expiryMs,
        now,
      ).id;
  }

  /**
   * The vault decided a held output (its sink, inside its transaction): approved, it is queued for the forge
   * and true is returned (the item fires); rejected or expired, it is recorded rejected, and a review run's
   * issue hears `review_failed`.
   */
  heldOutputDecided(
    { runId, output }: Extract<Requester, { type: "agent_run" }>,
    verdict: VaultVerdict,
    now: number,
  ): boolean {
    const next = this.runs.vaultDecided(runId, output, verdict, now);
    if (next?.decision.status === "rejected" && next.decision.output.type === "submit_review") {
      const reason = `the reviewer's review: ${next.decision.reason}`;
      const failed = this.reviews.failed(this.host.project(), runId, reason);
      if (failed) this.host.records.envelope(failed, now);
    }
    return next?.apply ?? false;
  }

  // --- schedules and triggers --------------------------------------------------------------------------------

  armSchedules(project: string, now: number): void {
    this.schedules.arm(project, now);
  }

  /** When the schedules must next be checked. */
  nextScheduleAt(): number | null {
    return this.schedules.nextAt();
  }

  /** Queues the scheduled runs that are due (all of them with `force`). Never throws. */
  runSchedulesIfDue(now: number, force = false): Promise<ScheduleCheck | null> {
    return this.schedules.runIfDue(this.host.env, now, this.scheduleHooks(), force);
  }

  private scheduleHooks(): ScheduleHooks {
    return {
      waiting: (agent) => this.runs.waiting(agent),
      queue: async (project, definition, trigger) => {
        await this.host.start(await agentRunRequest(this.host.env, project, definition, trigger));
      },
    };
  }

  /**
   * A forge event (its delivery's content key `key`) starts the agents whose `on` names it: their run ids, or
   * why none could start (the catalog unreadable). Answered, not thrown: the caller logs it, and workerd reports
   * every exception an object's method throws as uncaught, handled or not.
   */
  async trigger(project: Project, trigger: AgentTrigger, key: string): Promise<QueuedRuns> {
    try {
      const start = (request: AgentRunRequest) => this.host.start(request);
      return { queued: await this.triggers.trigger(this.host.env, project, trigger, key, start) };
    } catch (error) {
      return { error: errorMessage(error) };
    }
  }

  /** A push changed `.conveyor/agents/`: the next event reads the catalog again. */
  forgetCatalog(): void {
    this.triggers.catalog.forget();
  }

  // --- reads -------------------------------------------------------------------------------------------------

  view(runId: string): AgentRunView | null {
    return this.runs.view(runId);
  }

  latest(): AgentRunView[] {
    return this.runs.latest();
  }

  recent(agent: string, limit: number): AgentRunView[] {
    return this.runs.recent(agent, limit);
  }
}

/**
 * What the Worker (its routes, pages, cron), the IssueDOs and the runner API may call on a project's Durable
 * Object, and the shapes that cross that call. The ProjectDO (durable-objects/project/) implements it;
 * callers hold a stub typed by this interface, never the class.
 */
import type { AgentDefinition } from "../agents/definition.ts";
import type { EventOrigin } from "../agents/event-runs.ts";
import type { KeptDecision } from "../agents/held-outputs.ts";
import type { ReviewBinding } from "../agents/review-run.ts";
import type { TriageBinding } from "../agents/triage-run.ts";
import type { AgentTrigger } from "../agents/triggers.ts";
import type { BackfillPhase } from "../domain/backfill.ts";
import type { BudgetLimits } from "../domain/budget.ts";
import type { OpenJob, QueuePolicy } from "../domain/job-queue.ts";
import type { MergeQueue, Place } from "../domain/merge-queue.ts";
import type { Finding } from "../domain/supervisor.ts";
import type { Requester, VaultItemHead, VaultKind } from "../domain/vault.ts";
import type { ProjectPulse } from "../domain/watchdog.ts";
import type { Project } from "../projects/store.ts";
import type { CycleReport } from "../reconcile/cycle.ts";
import type { Claim, CompleteRequest, FailRequest, FireResponse, Job } from "../runner-api/contract.ts";
import type { RenewedLease, ReportItem } from "../runner-api/report-contract.ts";
import type { ModelUsage } from "../usage/sources.ts";

// --- jobs ---------------------------------------------------------------------------------------------------

/** The project's settings the queue applies: dispatch and budgets. */
export type ProjectPolicy = QueuePolicy & { budget: BudgetLimits };

/** Where an issue stands in the project's merge queue: holding the turn, or `ahead` issues before it. */
export type MergeTurn = Place;

/**
 * The merge queue as it stands: the issues in the order they asked, the first holding the turn since
 * `heldSince`, until `expiresAt` at the latest (its bound).
 */
export type MergeQueueView = MergeQueue & { expiresAt: number | null };

/** Whether work and event runs are being dispatched, and today's spend (all of it, and the event runs'). */
export type DispatchStatus = {
  paused: string | null;
  spentTodayUsd: number;
  eventRuns: { paused: string | null; spentTodayUsd: number };
};

/**
 * What a job runs, as the runner receives it, less what changes per lease. The issue's text is the one it
 * was queued with: an edit after a writer queued it never reaches the session.
 */
export type JobSpec = Omit<Job, "id" | "attempt">;

export type EnqueueRequest = {
  /** The IssueDO effect key: the same key enqueues once, however often it is delivered. */
  key: string;
  spec: JobSpec;
  policy: ProjectPolicy;
};

export type JobStatus = "queued" | "leased" | "done" | "failed" | "cancelled";

/** A job as the dashboard, the API and the supervisor see it. */
export type JobSummary = Omit<OpenJob, "seq" | "status"> & {
  id: string;
  status: JobStatus;
  leasedAt: number | null;
  /** What the runner reported while it ran: the fallbacks for its `complete`. */
  sessionId: string | null;
  branch: string | null;
  headSha: string | null;
  createdAt: number;
  updatedAt: number;
};

/** Why a runner's call about a job was refused; the HTTP status it maps to. */
export type LeaseRefusal = { ok: false; status: 403 | 404 | 409; error: string };

/** One job's answer in a runner's report (src/runner-api/report-contract.ts): `lease` when it was renewed. */
export type JobReport = { ok: true; lease?: RenewedLease } | LeaseRefusal;

// --- agents -------------------------------------------------------------------------------------------------

export type AgentRunRequest = {
  runId: string;
  trigger: string;
  outputs: AgentDefinition["outputs"];
  spec: JobSpec & { agent: NonNullable<JobSpec["agent"]> };
  policy: ProjectPolicy;
  /** A review run's pull request and the issue its review decides (src/agents/review-run.ts). */
  review?: ReviewBinding;
  /** A triage run's escalated issue and the escalation it answers (src/agents/triage-run.ts). */
  triage?: TriageBinding;
  /** A run a forge event started: it supersedes the agent's queued run on the same subject. */
  origin?: EventOrigin;
};

export type AgentRunStatus = "queued" | "running" | "done" | "failed";

export type AgentRunView = {
  id: string;
  agent: string;
  jobId: string;
  trigger: string;
  status: AgentRunStatus;
  costUsd: number;
  /** What the agent asked for and what became of it; null until its runner completed the run. */
  decisions: KeptDecision[] | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
};

/** The runs a schedule check or a forge event queued, or why none could be (the catalog unreadable). */
export type QueuedRuns = { queued: string[] } | { error: string };
export type ScheduleCheck = QueuedRuns;

// --- the vault ----------------------------------------------------------------------------------------------

export type VaultRequest = {
  /** The same key requests once, however often it is sent: the requester's effect key. */
  key: string;
  kind: VaultKind;
  requester: Requester;
  title: string;
  payload: unknown;
};

export type VaultDecideRequest = { decision: "approve" | "reject"; by: string; reason?: string };
export type VaultDecideResult =
  | { ok: true; item: VaultItemHead }
  | { ok: false; status: 404 | 409; error: string };

/**
 * What the issue that asked for an item did with it: `fired`, it acted on the approval (a held merge merges);
 * `withdrawn`, it no longer waits on it (it left the state that asked), with why.
 */
export type VaultSettle = { issue: number } & ({ as: "fired" } | { as: "withdrawn"; reason: string });

// --- reconciliation and the supervisor ----------------------------------------------------------------------

export type CycleOutcome =
  | (CycleReport & { calls: number; notModified: number })
  | { project: string; error: string };

export type HealthFinding = Finding & { openedAt: number; forgeIssue: number | null };

/** What the health page and `GET /api/v1/projects/:project/health` show. */
export type Health = {
  project: string | null;
  /** When the last check ran (null: never), and when the next is due. */
  checkedAt: number | null;
  nextAt: number | null;
  /** Why the last check failed, if it did. */
  error: string | null;
  findings: HealthFinding[];
};

/**
 * The mirror's backfill (durable-objects/project/backfill.ts): `running` (a step is due at `nextAt`),
 * `waiting` for the forge's rate limit to reset (`reason` says), `done`, `refused` by the forge for good
 * (`reason` says; until the project's credentials change), or `idle` (never asked). `page` is the
 * pass's next page of the open listing (0: the check that the pass missed nothing); `listed`, the items the
 * pass mirrored so far.
 */
export type BackfillStatus = {
  project: string | null;
  phase: BackfillPhase;
  pass: number;
  page: number;
  listed: number;
  startedAt: number | null;
  finishedAt: number | null;
  nextAt: number | null;
  reason: string | null;
};

export type SupervisorRun =
  | { checkedAt: number; findings: Finding[]; opened: string[]; resolved: string[] }
  | { error: string };

// --- the object ---------------------------------------------------------------------------------------------

export interface ProjectObject extends Rpc.DurableObjectBranded {
  // The job queue: IssueDO effects enqueue and cancel, runners claim and report under fenced leases.
  enqueue(request: EnqueueRequest): Promise<{ jobId: string; created: boolean }>;
  /** The issue left the queue's hands: queued jobs are dropped, leased ones told to stop at their heartbeat. */
  cancel(number: number): Promise<{ cancelled: number }>;
  claim(runnerId: string, holding: readonly string[], waitMs: number): Promise<Claim | null>;
  waitForJob(runnerId: string, holding: readonly string[], waitMs: number): Promise<boolean>;
  fireStep(
    jobId: string,
    runnerId: string,
    leaseToken: string,
    step: string,
  ): Promise<({ ok: true } & FireResponse) | LeaseRefusal>;
  /** A runner's report on jobs it holds here: each fenced by its own lease, all written in one transaction. */
  report(runnerId: string, items: readonly ReportItem[]): Promise<JobReport[]>;
  complete(jobId: string, runnerId: string, request: CompleteRequest): Promise<{ ok: true } | LeaseRefusal>;
  fail(jobId: string, runnerId: string, request: FailRequest): Promise<{ ok: true } | LeaseRefusal>;
  /** Whether `runnerId` holds agent job `jobId`'s current lease: its run's read tools answer under it. */
  agentLease(
    jobId: string,
    runnerId: string,
    leaseToken: string,
  ): { ok: true; project: string } | LeaseRefusal;
  dropRunner(runnerId: string): Promise<{ requeued: number }>;
  jobs(limit?: number): JobSummary[];
  issueSpendUsd(number: number): number;
  /** A model call the Worker made itself (the critic): spent like a session's (src/usage/sources.ts). */
  recordModelUsage(call: ModelUsage): Promise<void>;
  dispatchStatus(): DispatchStatus;
  // The merge queue (durable-objects/project/merge-queue.ts). `since`: the seq of the issue's edge that decided.
  /** Issue `number`'s merge asks for the turn, to hold it for at most `holdMs`: where it stands. */
  joinMergeQueue(number: number, since: number, holdMs: number): Promise<MergeTurn>;
  /** Issue `number` left the merge path: out of the queue; whoever gets the turn is told. */
  leaveMergeQueue(number: number, since: number): Promise<void>;
  mergeQueue(): MergeQueueView;
  // Agents.
  /** Queues an agent run: its job and its run record in one transaction; the same run id queues once. */
  startAgentRun(request: AgentRunRequest): Promise<{ runId: string; jobId: string }>;
  /**
   * A forge event starts the agents whose `on` names it: their run ids, or why
   * none could start. `key`: the delivery's content key, of
   * which each run's id derives (a replay under any delivery id names the same runs).
   */
  triggerAgents(project: Project, trigger: AgentTrigger, key: string): Promise<QueuedRuns>;
  /** A push to the default branch changed `.conveyor/agents/`: the next event reads the catalog again. */
  forgetAgentCatalog(): void;
  /** An agent run as it stands, its cost from the project's spend. */
  agentRun(runId: string): AgentRunView | null;
  latestAgentRuns(): AgentRunView[];
  recentAgentRuns(agent: string, limit?: number): AgentRunView[];
  checkAgentSchedules(project: string): Promise<ScheduleCheck | null>;
  // The vault.
  /** Puts a dangerous action in the vault, pending; the same `key` requests once. */
  vaultRequest(request: VaultRequest): Promise<{ id: string }>;
  /** A human's or the operator's approval or rejection of item `id`. */
  vaultDecide(id: string, request: VaultDecideRequest): Promise<VaultDecideResult>;
  vaultItem(id: string): VaultItemHead | null;
  /** What item `id` approved (its payload) once a decision approved it; null otherwise. */
  approvedVaultPayload(id: string): unknown;
  /** Its issue acted on item `id`, or withdrew it; nothing changes for an item already settled. */
  vaultSettle(id: string, settle: VaultSettle): Promise<void>;
  // Reconciliation and the supervisor, on the object's alarm.
  armReconciliation(project: string, delayMs?: number, supervisorPeriodMs?: number): Promise<number>;
  reconcileNow(project: string): Promise<CycleOutcome | null>;
  superviseNow(project: string, periodMs?: number): Promise<SupervisorRun | null>;
  /** The backfill of the project's mirror: `start` one unless one is under way; `step` one step now (tests). */
  backfillMirror(project: string, options?: { start?: boolean; step?: boolean }): Promise<BackfillStatus>;
  /** The supervisor's findings that stand, when it checked, and the object's pulse (the watchdog reads it). */
  health(): Health & { pulse: ProjectPulse };
  /** Delivers everything waiting now, delays and backoffs included (tests, operators). */
  drain(): Promise<void>;
}

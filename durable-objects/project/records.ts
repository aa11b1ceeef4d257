/**
 * What the ProjectDO's state changes write beside themselves, in the same transaction: D1 rows of its read
 * model (jobs, sessions, usage, vault items), batched, and lifecycle events for its issues, strictly in order.
 * Both are outbox rows that ./delivery.ts sends.
 */

import { type BudgetLimits, issueBudgetExceeded, utcDay } from "../../src/domain/budget.ts";
import type { LifecycleEvent } from "../../src/domain/lifecycle.ts";
import type { EventEnvelope } from "../../src/issue-events.ts";
import type { RunnerEvent } from "../../src/runner-api/contract.ts";
import { costUsd } from "../../src/usage/prices.ts";
import type { ModelUsage } from "../../src/usage/sources.ts";
import type { Outbox } from "../shared/outbox.ts";
import type { JobRecord } from "./d1-sink.ts";
import type { JobStore, StoredJob } from "./jobs/job-store.ts";

export const RECORD_CHANNELS = { d1: "d1", issue: "issue" } as const;

/**
 * Job records go to D1 in batches: the first waits this long, the ones written meanwhile join it, so a burst
 * of jobs is one D1 write rather than one per job. D1's job rows are a read model (dashboards, the runners
 * list); the queue itself is the ProjectDO.
 */
export const RECORD_DELAY_MS = 1_000;

type UsageEvent = Extract<RunnerEvent, { kind: "usage" }>;
type Cause = EventEnvelope["cause"];
type SessionEvent = Extract<RunnerEvent, { kind: "session" }>;

/** Every write method runs inside the caller's `transactionSync`. */
export class ProjectRecords {
  constructor(
    private readonly outbox: Outbox,
    private readonly store: JobStore,
  ) {}

  /** A record joins the batch already waiting, or starts one. */
  d1(record: JobRecord, now: number): void {
    const batch = this.outbox.nextAt([RECORD_CHANNELS.d1]);
    this.outbox.enqueue(RECORD_CHANNELS.d1, record, batch ?? now + RECORD_DELAY_MS);
  }

  job(project: string, job: StoredJob, now: number): void {
    this.d1(jobRecord(project, job), now);
  }

  session(project: string, job: StoredJob, runnerId: string, event: SessionEvent, now: number): void {
    this.d1(sessionRecord(project, job, runnerId, event, now), now);
  }

  /**
   * A usage report: in the project's daily spend and D1's usage (a re-sent figure replaces the earlier one,
   * per session and job attempt), charged to issue `number` (a review run's is the issue it reviews); the
   * record's id.
   */
  usage(project: string, job: StoredJob, event: UsageEvent, now: number, number = job.number): string {
    const record = usageRecord(project, job, event, now, number);
    this.d1(record, now);
    this.store.recordSpend(record.row.id, number, utcDay(now), event.usage);
    return record.row.id;
  }

  /** A model call Conveyor made itself, spent like a session's (src/usage/sources.ts); the record's id. */
  modelUsage(project: string, call: ModelUsage, now: number): string {
    const { id, source, tokens } = call;
    // Number 0: the project's alone (an agent run's vault item).
    const number = call.number ?? 0;
    const usd = costUsd(call.model, tokens);
    const row = { id, projectId: project, number, iteration: call.iteration, sessionId: source, ...tokens };
    this.d1({ table: "usage", row: { ...row, usd, turns: 0, at: now, source } }, now);
    this.store.recordSpend(id, number, utcDay(now), { usd, turns: 0 });
    return id;
  }

  /** After spend `usageId` on issue `number`: the issue hears budget_exceeded once it is over its budget. */
  overBudget(
    project: string,
    number: number,
    usageId: string,
    budget: BudgetLimits,
    cause: Cause,
    now: number,
  ) {
    const over = issueBudgetExceeded(this.store.issueSpend(number), budget);
    if (!over) return;
    const event = { type: "budget_exceeded", reason: over } as const;
    this.envelope({ id: `budget:${usageId}`, project, number, cause, event }, now);
  }

  /** An event for an issue, sent in the order written. */
  envelope(envelope: EventEnvelope, now: number): void {
    this.outbox.enqueue(RECORD_CHANNELS.issue, envelope, now);
  }

  /** An event about `job` for its issue, under id `id`. */
  issueEvent(project: string, job: StoredJob, id: string, now: number, event: LifecycleEvent): void {
    this.envelope({ id, project, number: job.number, cause: { kind: "job", id: job.id }, event }, now);
  }
}

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
  event: SessionEvent,
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
  event: UsageEvent,
  now: number,
  number: number,
): Extract<JobRecord, { table: "usage" }> {
  const { usage } = event;
  return {
    table: "usage",
    // One row per session per job attempt: a re-sent report replaces the figures instead of adding to them.
    row: {
      id: `${job.id}:${job.attempt}:${event.sessionId}`,
      projectId: project,
      number,
      iteration: job.spec.iteration,
      sessionId: event.sessionId,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: usage.cacheReadTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      usd: usage.usd,
      turns: usage.turns,
      at: now,
      source: !job.spec.agent ? "session" : number !== job.number ? "reviewer" : "agent",
    },
  };
}

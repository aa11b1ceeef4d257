/**
 * The ProjectDO's outbox, sent: D1 records in batches, its issues' events strictly in order, its agent runs'
 * checks and applications, and the vault's classifications (each on its own, so a slow classifier holds back
 * no job event). A call that wrote rows sends them at once in the background; the object's one alarm is the
 * safety net, armed for the earliest of everything that needs it.
 */

import { nextDeadline } from "../../src/domain/job-queue.ts";
import type { Env } from "../../src/env.ts";
import type { EventEnvelope } from "../../src/issue-events.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { log } from "../../src/log.ts";
import { armAlarm, deliverSoon, outboxAlarm } from "../shared/alarm.ts";
import { deliverInOrder, type Outbox, type OutboxRow } from "../shared/outbox.ts";
import type { AgentJobs } from "./agents/agent-jobs.ts";
import { AGENT_CHANNELS } from "./agents/runs.ts";
import type { Backfill } from "./backfill.ts";
import { type JobRecord, writeJobRecords } from "./d1-sink.ts";
import { tellIssuePages } from "./issue-pages.ts";
import type { JobStore } from "./jobs/job-store.ts";
import { MERGE_QUEUE_CHANNELS, type MergeQueueBook } from "./merge-queue.ts";
import type { Reconciliation } from "./reconciliation.ts";
import { RECORD_CHANNELS } from "./records.ts";
import type { Supervisor } from "./supervisor/supervisor.ts";
import { VAULT_CHANNELS, type Vault } from "./vault.ts";

const D1_BATCH = 50;
const CHANNELS = {
  ...RECORD_CHANNELS,
  ...AGENT_CHANNELS,
  ...VAULT_CHANNELS,
  ...MERGE_QUEUE_CHANNELS,
} as const;

/** The concerns whose outbox rows and alarm times this sends and arms for. */
export type DeliveredConcerns = {
  store: JobStore;
  agentJobs: AgentJobs;
  vault: Vault;
  reconciliation: Reconciliation;
  backfill: Backfill;
  supervisor: Supervisor;
  merges: MergeQueueBook;
};

export class ProjectDelivery {
  private flushing: Promise<void> | null = null;
  private classifying: Promise<void> | null = null;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly outbox: Outbox,
    private readonly concerns: DeliveredConcerns,
    private readonly project: () => string,
  ) {}

  /** This call wrote outbox rows: they go out now, not one alarm later. */
  soon(): Promise<void> {
    return deliverSoon(
      this.ctx,
      (floor) => this.arm(floor),
      () => this.flush(),
    );
  }

  /** Delivers everything waiting now, delays and backoffs included (tests, operators); then re-arms the alarm. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.flush(Number.POSITIVE_INFINITY);
    // The vault's classifications too, and what they decided.
    await this.classify(Number.POSITIVE_INFINITY);
    await this.flush(Number.POSITIVE_INFINITY);
    await this.arm();
  }

  /** Delivers the rows due by `horizon` (now by default); one run at a time, a caller mid-run joins it. */
  flush(horizon?: number): Promise<void> {
    // On its own: a slow classification holds back no job event.
    this.ctx.waitUntil(this.classify(horizon));
    this.flushing ??= (async () => {
      const { storage } = this.ctx;
      const d1 = async (rows: OutboxRow[]) => {
        const records = rows.map((r) => JSON.parse(r.payload) as JobRecord);
        await writeJobRecords(this.env.DB, records);
        // The issues' pages show these records: their objects tell them, without holding this delivery up.
        this.ctx.waitUntil(tellIssuePages(this.env, records));
      };
      await deliverInOrder(storage, this.outbox, [CHANNELS.d1], D1_BATCH, d1, horizon);
      // Strictly in order: an issue must hear `dispatched` before the phase that ends the session.
      await deliverInOrder(
        storage,
        this.outbox,
        [CHANNELS.issue],
        1,
        (rows) => this.sendEvents(rows),
        horizon,
      );
      // Whoever got the merge turn is told, on its own channel: never behind an issue's event.
      await this.concerns.merges.deliver(horizon);
      const project = this.concerns.store.meta()?.project;
      if (project) await this.concerns.agentJobs.deliver(project, horizon);
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** `floor`: the outbox's rows are being delivered now; the alarm is their safety net from then on. */
  async arm(floor?: number): Promise<void> {
    const { store, reconciliation, backfill, agentJobs, vault, supervisor, merges } = this.concerns;
    await armAlarm(this.ctx.storage, [
      outboxAlarm(this.outbox.nextOfEach(Object.values(CHANNELS)), floor),
      nextDeadline(store.deadlineFields(Date.now()), Date.now()),
      reconciliation.nextAt(),
      backfill.nextAt(),
      agentJobs.nextScheduleAt(),
      vault.nextExpiry(),
      supervisor.nextAt(),
      merges.nextExpiry(),
    ]);
  }

  private async sendEvents(rows: OutboxRow[]): Promise<void> {
    for (const row of rows) {
      const envelope = JSON.parse(row.payload) as EventEnvelope;
      const result = await issueStub(this.env, envelope.project, envelope.number).apply(envelope);
      // Sending an invalid event again cannot help; it is a bug to see in the logs, not to block the queue.
      if (result.outcome === "invalid") {
        log.error("job event refused", { id: envelope.id, reason: result.reason });
      }
      // An approval its issue no longer waits for does nothing: withdrawn, never left as if about to fire.
      const { event } = envelope;
      if (event.type === "vault_decision" && result.outcome === "rejected") {
        const reason = `issue #${envelope.number} no longer waits on it: ${result.reason ?? "refused"}`;
        this.concerns.vault.settle(
          this.project(),
          event.itemId,
          {
            issue: envelope.number,
            as: "withdrawn",
            reason: reason.slice(0, 2_000),
          },
          Date.now(),
        );
      }
    }
  }

  /** Classifies the vault's new items, one run at a time; what the verdicts decided goes out after. */
  private classify(horizon?: number): Promise<void> {
    this.classifying ??= this.concerns.vault
      .deliver(this.env, this.project(), horizon)
      .then((classified) => (classified ? this.soon() : undefined))
      // The rows stay in the outbox; the alarm tries again.
      .catch((error: unknown) => log.error("vault delivery failed", { error: String(error) }))
      .finally(() => {
        this.classifying = null;
      });
    return this.classifying;
  }
}

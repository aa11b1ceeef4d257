/**
 * The ProjectDO's vault (src/domain/vault.ts decides): items in the object's SQLite, each change written in
 * one synchronous transaction with what it causes — the item's D1 row (the read model of the API, the
 * dashboard and the CLI), the `vault_decision` its issue hears, the classification still to run — all through
 * the ProjectDO's outbox. Expiry runs on the object's alarm (`nextExpiry`). Ids are `v<n>`, per project.
 *
 * An approved item fires when something acts on the approval: an agent run's output queued for the forge (the
 * run's `agent-apply` row, committed with the approval); a held merge once its issue took the decision and
 * moves to merge (`settle`); an action step's when its job is about to run the step (`fireStep`). An issue
 * that stops waiting on its item withdraws it (`settle`), pending or approved: an approval nothing acted on
 * is never recorded as fired. An agent output whose run is gone stays `approved`: nothing is left to fire.
 */

import type {
  VaultDecideRequest,
  VaultDecideResult,
  VaultRequest,
  VaultSettle,
} from "../../src/contracts/project-object.ts";
import type { StepItem } from "../../src/domain/action-claims.ts";
import {
  type ClassifierVerdict,
  decide,
  decisionOf,
  itemHead,
  newItem,
  type Requester,
  route,
  type VaultEvent,
  type VaultItem,
  type VaultPolicy,
  vaultId,
} from "../../src/domain/vault.ts";
import type { Env } from "../../src/env.ts";
import { deliverInOrder, type Outbox } from "../shared/outbox.ts";
import type { JobRecord } from "./d1-sink.ts";
import type { ProjectRecords } from "./records.ts";
import { classifyItem } from "./vault-classify.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS vault_items (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  item TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS vault_items_pending ON vault_items (state, expires_at);
`;

export const VAULT_CHANNELS = { classify: "vault-classify" } as const;

/** Where the vault's writes go: the ProjectDO's D1 batch, its ordered issue-event channel, its agent runs. */
export type VaultSinks = {
  records: Pick<ProjectRecords, "d1" | "envelope" | "modelUsage" | "overBudget">;
  /**
   * An agent run's held output was decided (inside the vault's transaction); true when an approval was
   * carried out (the output queued for the forge), so the item fires.
   */
  agentOutput(
    requester: Extract<Requester, { type: "agent_run" }>,
    decision: NonNullable<ReturnType<typeof decisionOf>> & { itemId: string },
    now: number,
  ): boolean;
};

type ClassifyRow = { id: string };

export class Vault {
  private readonly sql: SqlStorage;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly outbox: Outbox,
    private readonly sinks: VaultSinks,
  ) {
    this.sql = storage.sql;
    this.sql.exec(SCHEMA);
  }

  /** A new pending item, its classification queued; a key seen before returns that item's id. */
  request(
    project: string,
    request: VaultRequest,
    expiryMs: number,
    now: number,
  ): { id: string; created: boolean } {
    return this.storage.transactionSync(() => {
      const seen = this.sql
        .exec<{ id: string }>("SELECT id FROM vault_items WHERE key = ?", request.key)
        .toArray()[0];
      if (seen) return { id: seen.id, created: false };
      const seq =
        (this.sql.exec<{ n: number | null }>("SELECT MAX(seq) AS n FROM vault_items").one().n ?? 0) + 1;
      const { key: _, ...rest } = request;
      const item = newItem({ ...rest, id: vaultId(seq) }, now, expiryMs);
      this.sql.exec(
        "INSERT INTO vault_items (seq, id, key, state, expires_at, item) VALUES (?, ?, ?, ?, ?, ?)",
        seq,
        item.id,
        request.key,
        item.state,
        item.expiresAt,
        JSON.stringify(item),
      );
      this.sinks.records.d1(itemRecord(project, item, now), now);
      this.outbox.enqueue(VAULT_CHANNELS.classify, { id: item.id } satisfies ClassifyRow, now);
      return { id: item.id, created: true };
    });
  }

  /** A human's (or the operator's) decision; refused with 404 for an unknown item, 409 for a decided one. */
  decide(project: string, id: string, request: VaultDecideRequest, now: number): VaultDecideResult {
    return this.storage.transactionSync(() => {
      const item = this.item(id);
      if (!item) return { ok: false, status: 404, error: `no vault item ${id}` };
      const event: VaultEvent = {
        type: request.decision,
        by: request.by,
        at: now,
        ...(request.reason && { reason: request.reason }),
      };
      const outcome = this.apply(project, item, event, now);
      return outcome.ok
        ? { ok: true, item: itemHead(outcome.item) }
        : { ok: false, status: 409, error: outcome.reason };
    });
  }

  /** Expires the pending items whose time is up; their issues hear it. */
  expireDue(project: string, now: number): number {
    const due = this.sql
      .exec<{ item: string }>(
        "SELECT item FROM vault_items WHERE state = 'pending' AND expires_at <= ? ORDER BY seq",
        now,
      )
      .toArray();
    if (due.length === 0) return 0;
    this.storage.transactionSync(() => {
      for (const row of due)
        this.apply(project, JSON.parse(row.item) as VaultItem, { type: "expire", at: now }, now);
    });
    return due.length;
  }

  /** When the alarm must next expire an item. */
  nextExpiry(): number | null {
    return (
      this.sql
        .exec<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM vault_items WHERE state = 'pending'")
        .one().at ?? null
    );
  }

  /**
   * An action's job is about to run the step item `id` approved: the item fires, once. The same attempt
   * asking again (its answer was lost) is told it fired; a later attempt (the runner died after the first) is
   * refused: a dangerous step runs at most once per approval.
   */
  fireStep(
    project: string,
    id: string,
    step: { issue: number; step: string; jobId: string; attempt: number },
    now: number,
  ): { fired: true } | { fired: false; reason: string } {
    return this.storage.transactionSync(() => {
      const item = this.item(id);
      const { requester } = item ?? {};
      if (
        !item ||
        requester?.type !== "issue" ||
        requester.issue !== step.issue ||
        requester.step !== step.step
      )
        return {
          fired: false as const,
          reason: `vault item ${id} did not approve step ${step.step} of #${step.issue}`,
        };
      const by = `run by job ${step.jobId} (attempt ${step.attempt})`;
      if (item.state === "fired" && item.audit.findLast((e) => e.action === "fired")?.reason === by)
        return { fired: true as const };
      const outcome = decide(item, { type: "fired", at: now, reason: by });
      if (!outcome.ok) return { fired: false as const, reason: outcome.reason };
      this.save(project, outcome.item, now);
      return { fired: true as const };
    });
  }

  /** The items the action steps of issue `issue` asked for, in the order asked. */
  stepItems(issue: number): StepItem[] {
    return this.sql
      .exec<{ item: string }>(
        `SELECT item FROM vault_items
         WHERE json_extract(item, '$.kind') = 'action_step' AND json_extract(item, '$.requester.issue') = ?
         ORDER BY seq`,
        issue,
      )
      .toArray()
      .flatMap((row) => {
        const item = JSON.parse(row.item) as VaultItem;
        const step = item.requester.type === "issue" ? item.requester.step : undefined;
        return step ? [{ id: item.id, step, state: item.state }] : [];
      });
  }

  /**
   * What item `id`'s requesting issue did with it: acted on the approval (fired), or stopped waiting on it
   * (withdrawn). Only the issue that asked may; an item already settled stays as it is. Whether it changed.
   */
  settle(project: string, id: string, settle: VaultSettle, now: number): boolean {
    return this.storage.transactionSync(() => {
      const item = this.item(id);
      if (item?.requester.type !== "issue" || item.requester.issue !== settle.issue) return false;
      // A step fires only as its job runs it.
      if (settle.as === "fired" && item.kind === "action_step") return false;
      const event: VaultEvent =
        settle.as === "fired"
          ? { type: "fired", at: now, reason: `acted on by issue #${settle.issue}` }
          : { type: "withdraw", at: now, reason: settle.reason };
      const outcome = decide(item, event);
      if (!outcome.ok) return false;
      this.save(project, outcome.item, now);
      return true;
    });
  }

  item(id: string): VaultItem | null {
    const row = this.sql.exec<{ item: string }>("SELECT item FROM vault_items WHERE id = ?", id).toArray()[0];
    return row ? (JSON.parse(row.item) as VaultItem) : null;
  }

  /** Item `id` without its payload: what the Worker's pages and routes read. */
  head(id: string) {
    const item = this.item(id);
    return item && itemHead(item);
  }

  /** What item `id` approved (its payload) once a decision approved it; null otherwise. */
  approvedPayload(id: string): unknown {
    const item = this.item(id);
    return item && (item.state === "approved" || item.state === "fired") ? item.payload : null;
  }

  /** Newest first, optionally in one state.
  list(state?: VaultState, limit = 100): VaultItem[] {
    const rows = state
      ? this.sql.exec<{ item: string }>(
          "SELECT item FROM vault_items WHERE state = ? ORDER BY seq DESC LIMIT ?",
          state,
          limit,
        )
      : this.sql.exec<{ item: string }>("SELECT item FROM vault_items ORDER BY seq DESC LIMIT ?", limit);
    return rows.toArray().map((r) => JSON.parse(r.item) as VaultItem);
  }

  /**
   * Classifies the requested items, one at a time; whether there were any. Never throws for a failed
   * classification (that is `ask`); a row is postponed only when the object's own storage fails.
   */
  async deliver(env: Env, project: string, horizon?: number): Promise<boolean> {
    if (this.outbox.nextAt([VAULT_CHANNELS.classify]) === null) return false;
    await deliverInOrder(
      this.storage,
      this.outbox,
      [VAULT_CHANNELS.classify],
      1,
      async (rows) => {
        for (const row of rows) {
          const { id } = JSON.parse(row.payload) as ClassifyRow;
          const item = this.item(id);
          if (item?.state !== "pending" || item.verdict) continue;
          const { verdict, policy, usage, budget } = await classifyItem(env, project, item);
          this.storage.transactionSync(() => {
            // The classifier's call is spent whatever it answered: against the item's issue, like a session's.
            const spent = this.sinks.records.modelUsage(project, usage, Date.now());
            const cause = { kind: "system", id: `vault:${id}` } as const;
            if (usage.number !== null && budget)
              this.sinks.records.overBudget(project, usage.number, spent, budget, cause, Date.now());
            this.classified(project, id, verdict, policy, Date.now());
          });
        }
      },
      horizon,
    );
    return true;
  }

  /** Records the verdict, then does what the policy routes it to: approve, reject, or wait for a human. */
  private classified(
    project: string,
    id: string,
    verdict: ClassifierVerdict,
    policy: VaultPolicy,
    now: number,
  ) {
    const item = this.item(id);
    if (!item) return;
    const outcome = this.apply(project, item, { type: "classified", verdict, at: now }, now);
    if (!outcome.ok) return;
    const routed = route(item.kind, verdict, policy);
    if (routed.action === "ask") return;
    this.apply(
      project,
      outcome.item,
      { type: routed.action, by: "policy", reason: routed.reason, at: now },
      now,
    );
  }

  /** One event through the table; the item saved (with its D1 row), and what its decision causes. */
  private apply(project: string, item: VaultItem, event: VaultEvent, now: number) {
    const outcome = decide(item, event);
    if (!outcome.ok) return outcome;
    let next = outcome.item;
    // An agent run's approval is carried out by telling it: its output is queued in this transaction. An
    // issue's fires once the issue acts on it (settle) or its job runs the step (fireStep).
    const told = next.state !== item.state && this.tell(project, next, now);
    if (told && next.state === "approved" && next.requester.type === "agent_run") {
      const fired = decide(next, { type: "fired", at: now });
      if (fired.ok) next = fired.item;
    }
    this.save(project, next, now);
    return { ok: true as const, item: next };
  }

  /** The requester hears the item's decision; whether it did (an approval it heard is carried out). */
  private tell(project: string, item: VaultItem, now: number): boolean {
    const decision = decisionOf(item);
    if (!decision) return false;
    const { requester } = item;
    if (requester.type === "agent_run")
      return this.sinks.agentOutput(requester, { ...decision, itemId: item.id }, now);
    this.sinks.records.envelope(
      {
        // The IssueDO applies one envelope id once: however often the outbox delivers it, one decision.
        id: `vault:${item.id}:decision`,
        project,
        number: requester.issue,
        cause: { kind: decision.decision === "expired" ? "timer" : "system", id: `vault:${item.id}` },
        event: {
          type: "vault_decision",
          itemId: item.id,
          decision: decision.decision,
          by: decision.by,
          ...(decision.reason && { reason: decision.reason.slice(0, 2_000) }),
        },
      },
      now,
    );
    return true;
  }

  /** The changed item, with its D1 row. */
  private save(project: string, item: VaultItem, now: number) {
    this.sql.exec(
      "UPDATE vault_items SET state = ?, item = ? WHERE id = ?",
      item.state,
      JSON.stringify(item),
      item.id,
    );
    this.sinks.records.d1(itemRecord(project, item, now), now);
  }
}

/** The repository's own policy, or the default when it has none or cannot be read. */
function itemRecord(project: string, item: VaultItem, now: number): JobRecord {
  return {
    table: "vault_items",
    row: {
      projectId: project,
      id: item.id,
      kind: item.kind,
      requester: JSON.stringify(item.requester),
      title: item.title,
      payload: JSON.stringify(item.payload ?? null),
      state: item.state,
      verdict: item.verdict ? JSON.stringify(item.verdict) : null,
      audit: JSON.stringify(item.audit),
      createdAt: item.createdAt,
      expiresAt: item.expiresAt,
      updatedAt: now,
    },
  };
}

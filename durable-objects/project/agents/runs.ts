/**
 * The ProjectDO's agent runs: each run is one `agent` job of the queue. When its runner completes it, the
 * requested outputs are kept; the `agent-check` outbox row then decides them against the definition the run
 * was queued with (src/agents/outputs.ts), and each accepted one becomes an `agent-apply` row of its own, so a
 * completion delivered twice, or a check repeated after a lost acknowledgement, applies each output once.
 * An accepted output of a type the definition marks dangerous is held in the vault instead: its `agent-apply`
 * row is queued when the vault approves it, and a rejection or expiry records it as rejected with the reason.
 */
import type { AgentDefinition } from "../../../src/agents/definition.ts";
import {
  afterVault,
  heldOutputs,
  type KeptDecision,
  type VaultVerdict,
} from "../../../src/agents/held-outputs.ts";
import {
  checkOutputs,
  type RequestedOutput,
  type RunContext,
  type Targets,
} from "../../../src/agents/outputs.ts";
import type { AgentRunStatus, AgentRunView } from "../../../src/contracts/project-object.ts";
import type { Outbox } from "../../shared/outbox.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS agent_runs (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  job_id TEXT NOT NULL,
  trigger TEXT NOT NULL,
  status TEXT NOT NULL,
  outputs TEXT NOT NULL,
  requests TEXT,
  decisions TEXT,
  error TEXT,
  cost_usd REAL NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_runs_by_agent ON agent_runs (agent, created_at);
`;

export const AGENT_CHANNELS = { check: "agent-check", apply: "agent-apply" } as const;

/** Puts a held output in the vault (inside the caller's transaction): the item's id. */
export type HoldOutput = (held: {
  runId: string;
  agent: string;
  index: number;
  output: RequestedOutput;
}) => string;

export type CheckRow = { runId: string };
export type ApplyRow = { runId: string; index: number };

type Row = {
  id: string;
  agent: string;
  job_id: string;
  trigger: string;
  status: AgentRunStatus;
  outputs: string;
  requests: string | null;
  decisions: string | null;
  error: string | null;
  cost_usd: number;
  created_at: number;
  updated_at: number;
};

/** Thin typed access plus the decisions; every write method is meant to run inside `transactionSync`. */
export class AgentRuns {
  constructor(
    private readonly sql: SqlStorage,
    private readonly outbox: Outbox,
  ) {
    sql.exec(SCHEMA);
  }

  queue(
    run: { id: string; agent: string; jobId: string; trigger: string; outputs: AgentDefinition["outputs"] },
    now: number,
  ): void {
    this.sql.exec(
      `INSERT INTO agent_runs (id, agent, job_id, trigger, status, outputs, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)`,
      run.id,
      run.agent,
      run.jobId,
      run.trigger,
      JSON.stringify(run.outputs),
      now,
      now,
    );
  }

  /** Its job was leased (again): the run is running. */
  running(runId: string, now: number): void {
    this.sql.exec(
      "UPDATE agent_runs SET status = 'running', updated_at = ? WHERE id = ? AND status IN ('queued', 'running')",
      now,
      runId,
    );
  }

  /** Its job went back to the queue (a lease lost, a retryable failure): the run waits again. */
  requeued(runId: string, now: number): void {
    this.sql.exec(
      "UPDATE agent_runs SET status = 'queued', updated_at = ? WHERE id = ? AND status = 'running'",
      now,
      runId,
    );
  }

  /** Its runner completed the run: the requests wait for the check. A second completion changes nothing. */
  reported(runId: string, requests: readonly RequestedOutput[], now: number): void {
    const row = this.row(runId);
    if (!row || row.requests !== null || row.status === "done" || row.status === "failed") return;
    this.sql.exec(
      "UPDATE agent_runs SET requests = ?, updated_at = ? WHERE id = ?",
      JSON.stringify(requests),
      now,
      runId,
    );
    this.outbox.enqueue(AGENT_CHANNELS.check, { runId } satisfies CheckRow, now);
  }

  /** Its job ended without a completion (failed for good, or cancelled). */
  ended(runId: string, reason: string, now: number): void {
    this.sql.exec(
      `UPDATE agent_runs SET status = 'failed', error = ?, updated_at = ?
       WHERE id = ? AND status IN ('queued', 'running')`,
      reason,
      now,
      runId,
    );
  }

  setCost(runId: string, usd: number): void {
    this.sql.exec("UPDATE agent_runs SET cost_usd = ? WHERE id = ?", usd, runId);
  }

  /** The issue numbers the run's requests aim at: what the check must know of the forge. */
  targetsOf(runId: string): number[] {
    const requests = this.requests(this.row(runId));
    const numbers = requests.flatMap((r) => ("issue" in r ? [r.issue] : []));
    return [...new Set(numbers)];
  }

  /**
   * Decides the run's requests once (a repeated check finds them decided) and queues each accepted output
   * for the forge, or `hold`s it in the vault when its type is dangerous; returns the decisions, or null when
   * they were made before. Inside a transaction.
   */
  decide(
    runId: string,
    targets: Targets,
    now: number,
    hold: HoldOutput,
    context: RunContext = {},
  ): KeptDecision[] | null {
    const row = this.row(runId);
    if (!row || row.decisions !== null || row.requests === null) return null;
    const outputs = JSON.parse(row.outputs) as AgentDefinition["outputs"];
    const checked = checkOutputs({ outputs }, this.requests(row), targets, context);
    const held = new Set(heldOutputs({ outputs }, checked));
    const decisions: KeptDecision[] = checked.map((decision, index) =>
      held.has(index)
        ? { ...decision, vault: hold({ runId, agent: row.agent, index, output: decision.output }) }
        : decision,
    );
    this.sql.exec("UPDATE agent_runs SET status = 'done' WHERE id = ?", runId);
    this.saveDecisions(runId, decisions, now);
    for (const [index, decision] of decisions.entries()) {
      if (decision.status === "accepted" && decision.output.type !== "noop" && !decision.vault) {
        this.outbox.enqueue(AGENT_CHANNELS.apply, { runId, index } satisfies ApplyRow, now);
      }
    }
    return decisions;
  }

  /**
   * The vault decided the held output `index` (src/agents/held-outputs.ts): approved, its `agent-apply` row is
   * queued; rejected or expired, it is recorded rejected with the vault's reason. Null when it was not that
   * item's to decide (a run forgotten, a decision seen before). Inside a transaction.
   */
  vaultDecided(
    runId: string,
    index: number,
    verdict: VaultVerdict,
    now: number,
  ): { decision: KeptDecision; apply: boolean } | null {
    const decisions = this.decisions(this.row(runId));
    const kept = decisions?.[index];
    const next = kept && afterVault(kept, verdict);
    if (!decisions || !next) return null;
    decisions[index] = next.decision;
    this.saveDecisions(runId, decisions, now);
    if (next.apply) this.outbox.enqueue(AGENT_CHANNELS.apply, { runId, index } satisfies ApplyRow, now);
    return next;
  }

  /** The accepted output an `agent-apply` row stands for (with the vault item it was held in); null when the run is gone. */
  accepted(runId: string, index: number): (KeptDecision & { status: "accepted" }) | null {
    const decision = this.decisions(this.row(runId))?.[index];
    return decision?.status === "accepted" ? decision : null;
  }

  /** The agent a run is of; null when the run is gone. */
  agentOf(runId: string): string | null {
    return this.row(runId)?.agent ?? null;
  }

  /** The forge took the output, or refused it for good (`refusal`). */
  markApplied(runId: string, index: number, now: number, refusal: string | null = null): void {
    const row = this.row(runId);
    const decisions = this.decisions(row);
    const decision = decisions?.[index];
    if (!decisions || !decision) return;
    decisions[index] = refusal === null ? { ...decision, applied: true } : { ...decision, failed: refusal };
    this.saveDecisions(runId, decisions, now);
  }

  private saveDecisions(runId: string, decisions: readonly KeptDecision[], now: number): void {
    this.sql.exec(
      "UPDATE agent_runs SET decisions = ?, updated_at = ? WHERE id = ?",
      JSON.stringify(decisions),
      now,
      runId,
    );
  }

  view(runId: string): AgentRunView | null {
    const row = this.row(runId);
    return row ? toView(row) : null;
  }

  /** Each agent's latest run. */
  latest(): AgentRunView[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM agent_runs r WHERE created_at = (
           SELECT MAX(created_at) FROM agent_runs WHERE agent = r.agent)`,
      )
      .toArray()
      .map(toView);
  }

  /** Forgets finished runs queued before `before`, except each agent's latest (its "last run"). */
  prune(before: number): void {
    this.sql.exec(
      `DELETE FROM agent_runs WHERE created_at < ? AND status IN ('done', 'failed')
         AND created_at < (SELECT MAX(created_at) FROM agent_runs latest WHERE latest.agent = agent_runs.agent)`,
      before,
    );
  }

  /** `agent`'s most recent runs, newest first. */
  recent(agent: string, limit: number): AgentRunView[] {
    return this.sql
      .exec<Row>("SELECT * FROM agent_runs WHERE agent = ? ORDER BY created_at DESC LIMIT ?", agent, limit)
      .toArray()
      .map(toView);
  }

  /** Whether a run of `agent` still waits for a runner. */
  waiting(agent: string): boolean {
    return (
      this.sql.exec("SELECT 1 FROM agent_runs WHERE agent = ? AND status = 'queued' LIMIT 1", agent).toArray()
        .length > 0
    );
  }

  private row(runId: string): Row | null {
    return this.sql.exec<Row>("SELECT * FROM agent_runs WHERE id = ?", runId).toArray()[0] ?? null;
  }

  private requests(row: Row | null): RequestedOutput[] {
    return row?.requests ? (JSON.parse(row.requests) as RequestedOutput[]) : [];
  }

  private decisions(row: Row | null): KeptDecision[] | null {
    return row?.decisions ? (JSON.parse(row.decisions) as KeptDecision[]) : null;
  }
}

function toView(row: Row): AgentRunView {
  return {
    id: row.id,
    agent: row.agent,
    jobId: row.job_id,
    trigger: row.trigger,
    status: row.status,
    costUsd: row.cost_usd,
    decisions: row.decisions ? (JSON.parse(row.decisions) as KeptDecision[]) : null,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

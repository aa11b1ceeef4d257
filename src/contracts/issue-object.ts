/**
 * What the Worker (its routes, pages, cron) and the ProjectDO may call on an issue's Durable Object, and the
 * shapes that cross that call. The IssueDO (durable-objects/issue/) implements it; callers hold a stub typed
 * by this interface, never the class.
 */
import type { FailedCheck } from "../domain/ci-verdict.ts";
import type { Escalation, Proposal } from "../domain/escalation.ts";
import type { Brief } from "../domain/lifecycle.ts";
import type { Timer } from "../domain/timers.ts";
import type { CauseKind, EventEnvelope } from "../issue-events.ts";
import type { ActivityItem } from "../runner-api/contract.ts";

/**
 * `parked`: the event came before the state that accepts it; it waits on the issue, its id unspent, and is
 * applied once that state comes (src/domain/early-events.ts).
 */
export type EventOutcome = "applied" | "rejected" | "parked";

export type ApplyResult =
  | { duplicate: boolean; seq: number; outcome: EventOutcome; state: string; reason: string | null }
  /** Not an event for this object at all: nothing is recorded. */
  | { duplicate: false; outcome: "invalid"; reason: string };

/** One event the issue's object recorded, applied or rejected. */
export type HistoryEntry = {
  seq: number;
  eventId: string;
  event: string;
  from: string;
  to: string;
  outcome: EventOutcome;
  reason: string | null;
  cause: { kind: CauseKind; id: string };
  at: number;
  /** A CI result's verdict and its failing checks (name, what it reported, its link): what a human asks first. */
  ci?: { result: "green" | "red"; checks: FailedCheck[] };
};

/** An outbox channel's backlog. */
export type OutboxStats = { channel: string; pending: number; attempts: number; lastError: string | null };

/** An effect given up on, kept with its last error for a human. */
export type DeadLetter = {
  id: number;
  channel: string;
  kind: string;
  attempts: number;
  error: string;
  at: number;
};

/** An effect dropped undelivered: the issue had moved on from what it was decided on. */
export type DroppedEffect = { kind: string; reason: string; at: number };

/** A step a session of the issue was seen taking. */
export type StoredActivity = ActivityItem & { seq: number; jobId: string };

export type IssueSummary = {
  project: string;
  number: number;
  state: string;
  iteration: number;
  branch: string | null;
  sessionId: string | null;
  headSha: string | null;
  prOpened: boolean;
  prNumber: number | null;
  ciFixes: number;
  criticRounds: number;
  /** Updates from the base so far (the forge's, or a session's conflict resolution). */
  updates: number;
  blockers: string[];
  /** The issue's text as a writer queued it (null before a triage that carried it). */
  brief: Brief | null;
  /** The last session's account of its work. */
  summary: string | null;
  reason: string | null;
  /** `action`: an operational task following `formula` (docs/actions.md); absent: code. */
  kind?: "code" | "action";
  formula?: string | null;
  /** The action step waiting for the vault. */
  vaultStep?: string | null;
  /** The vault item a held merge waits on. */
  vaultItem: string | null;
  /** Reviews whose change requests a writer's `/conveyor merge` overrode: they hold the merge no more. */
  overridden?: number[];
  /** The issue's latest escalation and its cause; null before any (src/domain/escalation.ts). */
  escalation?: Escalation | null;
  /** Effects given up on while the forge did not answer wait for it to answer again. */
  recovering?: boolean;
  /** The triage's proposed next step for the latest escalation, until a writer accepts it. */
  proposal?: Proposal | null;
};

export type IssueView = IssueSummary & {
  timers: Timer[];
  outbox: OutboxStats[];
  /** Effects given up on, newest first, with their last error. */
  deadLetters: DeadLetter[];
  /** Effects dropped undelivered, newest first, with why. */
  droppedEffects: DroppedEffect[];
  history: HistoryEntry[];
  activity: StoredActivity[];
};

export type RedeliverResult = { ok: true; kind: string } | { ok: false; error: string };

/** The D1 records of an issue that its page shows beside what its object holds. */
export type IssueRecordTable = "jobs" | "usage" | "vault_items";

/** The issue's object. `fetch` takes a dashboard page's WebSocket upgrade: it hears of every recorded event. */
export interface IssueObject extends Rpc.DurableObjectBranded {
  /** Applies one event at most once (by envelope id); resolves once the event is durably recorded. */
  apply(envelope: EventEnvelope): Promise<ApplyResult>;
  /** The issue as it stands, with its history; null for an issue Conveyor never heard of. */
  view(): IssueView | null;
  /** The issue as it stands, without its history and outbox (a cheaper read); null likewise. */
  summary(): IssueSummary | null;
  /** Sends dead letter `id` again, to the end of its lane. */
  redeliver(id: number): Promise<RedeliverResult>;
  /** What a session of the issue is doing (informational). */
  noteActivity(jobId: string, items: ActivityItem[]): Promise<void>;
  /**
   * The ProjectDO wrote newer records of the issue to D1 (its jobs, usage, vault item): the pages watching
   * the issue are told, to show them without a reload. Informational: nothing is recorded.
   */
  recordsChanged(tables: readonly IssueRecordTable[]): void;
  /**
   * The project's merge queue gave this issue the turn: its merge, waiting in the outbox for it, is delivered
   * now instead of at its next backoff. Nothing is recorded; a lost call leaves the backoff to find the turn.
   */
  mergeTurn(): void;
  /** Delivers whatever is due now. */
  drain(): Promise<void>;
}

/**
 * One Durable Object per issue: applies lifecycle events through the pure table, records every event
 * (applied or rejected) with its effects in one synchronous transaction, and delivers the outbox from its
 * single alarm, which it shares with the lifecycle's timers.
 */
import { DurableObject } from "cloudflare:workers";
import { classifyFailure, deadLetters, failureOf } from "../src/domain/failure.ts";
import {
  type Brief,
  DEFAULT_MAX_EFFECT_ATTEMPTS,
  type Effect,
  type LifecycleEvent,
  retainsWorktree,
  transition,
} from "../src/domain/lifecycle.ts";
import { armTimers } from "../src/domain/timers.ts";
import type { Env } from "../src/env.ts";
import { type EventEnvelope, envelopeSchema } from "../src/issue-events.ts";
import { type ActivityItem, activityItemSchema } from "../src/runner-api/contract.ts";
import { zodMessage } from "../src/validation.ts";
import { armAlarm, deliverSoon, outboxAlarm } from "./alarm.ts";
import { type D1Record, writeRecords } from "./d1-sink.ts";
import { type DeadLetter, DeadLetters } from "./dead-letter.ts";
import {
  DELIVERERS,
  type Deliverer,
  deliveredEffectChannels,
  effectChannel,
  laneChannels,
} from "./effects.ts";
import { type HistoryEntry, type IssueRow, IssueStore, type Timer } from "./issue-store.ts";
import { Outbox, type OutboxStats } from "./outbox.ts";
import { Retention, retentionMs } from "./retention.ts";
import { SessionActivity, type StoredActivity } from "./session-activity.ts";
import { SingleFlight } from "./single-flight.ts";
import { acceptWatcher, notifyWatchers } from "./watchers.ts";

const D1_BATCH = 50;
const HISTORY_LIMIT = 500;
const DEAD_LETTERS_SHOWN = 20;
/** The session steps an issue page shows. */
const ACTIVITY_SHOWN = 200;

export type ApplyResult =
  | { duplicate: boolean; seq: number; outcome: "applied" | "rejected"; state: string; reason: string | null }
  /** Not an event for this object at all: nothing is recorded. */
  | { duplicate: false; outcome: "invalid"; reason: string };

export type IssueView = IssueSummary & {
  timers: Timer[];
  outbox: OutboxStats[];
  /** Effects given up on, newest first, with their last error. */
  deadLetters: DeadLetter[];
  history: HistoryEntry[];
  activity: StoredActivity[];
};

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
};

export class IssueDO extends DurableObject<Env> {
  private readonly store: IssueStore;
  private readonly outbox: Outbox;
  private readonly deadLetters: DeadLetters;
  private readonly retention: Retention;
  private readonly activity: SessionActivity;
  private readonly d1 = new SingleFlight(() => this.flushD1());
  /** One delivery run per effect lane: a lane stuck on a slow forge never holds back another. */
  private readonly lanes = laneChannels().map((channels) => ({
    channels,
    flight: new SingleFlight(() => this.deliverLane(channels)),
  }));

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new IssueStore(ctx.storage.sql);
    this.outbox = new Outbox(ctx.storage.sql);
    this.deadLetters = new DeadLetters(ctx.storage.sql);
    this.retention = new Retention(ctx.storage.sql);
    this.activity = new SessionActivity(ctx.storage.sql);
    // After a crash between a commit and its setAlarm, the next wake-up re-arms delivery. An object without
    // an issue row has recorded nothing (outbox rows and timers are written with it): nothing to re-arm.
    if (this.store.issue()) ctx.blockConcurrencyWhile(() => this.scheduleAlarm());
  }

  /** Applies one event at most once (by envelope id). Resolves once the event is durably recorded. */
  async apply(input: EventEnvelope): Promise<ApplyResult> {
    const parsed = envelopeSchema.safeParse(input);
    if (!parsed.success) return { duplicate: false, outcome: "invalid", reason: zodMessage(parsed.error) };
    const envelope = parsed.data;
    const owner = this.store.issue();
    if (owner && (owner.project !== envelope.project || owner.number !== envelope.number)) {
      const reason = `event for ${envelope.project}#${envelope.number} sent to ${owner.project}#${owner.number}`;
      return { duplicate: false, outcome: "invalid", reason };
    }
    const result = this.ctx.storage.transactionSync(() => this.record(envelope, Date.now()));
    if (!result.duplicate) notifyWatchers(this.ctx, { seq: result.seq, state: result.state });
    // Deliver now rather than one alarm later (and beside an alarm still busy with a slow lane).
    if (!result.duplicate)
      await deliverSoon(
        this.ctx,
        (floor) => this.scheduleAlarm(floor),
        () => this.flush(),
      );
    return result;
  }

  /** A dashboard page's WebSocket: told of every event recorded from now on (see watchers.ts). */
  override async fetch(request: Request): Promise<Response> {
    return acceptWatcher(this.ctx, request);
  }

  override async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    // 1005/1006 are reserved: they say no code came, and cannot be sent back.
    socket.close(code === 1005 || code === 1006 ? 1000 : code);
  }

  view(): IssueView | null {
    const summary = this.summary();
    if (!summary) return null;
    return {
      ...summary,
      timers: this.store.timers(),
      outbox: this.outbox.stats(),
      deadLetters: this.deadLetters.list(DEAD_LETTERS_SHOWN),
      history: this.store.history(HISTORY_LIMIT),
      activity: this.activity.latest(ACTIVITY_SHOWN),
    };
  }

  /**
   * An operator sends dead letter `id` again (once whatever the forge refused is fixed: a token's rights, a
   * deleted label). It goes to the end of its lane and runs against the issue as it is now; failing for good
   * again, it is a dead letter again and the issue hears of it again.
   */
  async redeliver(id: number): Promise<{ ok: true; kind: string } | { ok: false; error: string }> {
    if (!this.store.issue()) return { ok: false, error: "the issue is not known to Conveyor" };
    const kind = this.ctx.storage.transactionSync(() => {
      const letter = this.deadLetters.take(id);
      if (!letter) return null;
      this.outbox.enqueue(letter.channel, JSON.parse(letter.payload), Date.now());
      return letter.kind;
    });
    if (kind === null) return { ok: false, error: `issue has no dead letter ${id}` };
    await this.drain();
    return { ok: true, kind };
  }

  /** A session of this issue at work (see session-activity.ts); the pages watching the issue are told. */
  async noteActivity(jobId: string, items: ActivityItem[]): Promise<void> {
    const parsed = activityItemSchema.array().max(50).safeParse(items);
    if (!parsed.success || !this.store.issue()) return;
    this.ctx.storage.transactionSync(() => this.activity.append(jobId, parsed.data));
    notifyWatchers(this.ctx, { activity: parsed.data.length });
  }

  /** The issue's lifecycle context without its history: what an effect's deliverer reads. */
  private summary(): IssueSummary | null {
    const row = this.store.issue();
    if (!row) return null;
    const { context: c } = row;
    return {
      project: row.project,
      number: row.number,
      state: c.state,
      iteration: c.iteration,
      branch: c.branch,
      sessionId: c.sessionId,
      headSha: c.headSha,
      prOpened: c.prOpened,
      prNumber: c.prNumber,
      ciFixes: c.ciFixes,
      criticRounds: c.criticRounds,
      updates: c.updates,
      blockers: c.blockers,
      brief: c.brief,
      summary: c.summary,
      reason: c.reason,
      kind: c.kind ?? "code",
      formula: c.formula ?? null,
      vaultStep: c.vaultStep ?? null,
      vaultItem: c.vaultItem,
    };
  }

  /** Delivers whatever is due now; resolves when that attempt (or the one already running) ends. */
  async drain(): Promise<void> {
    await this.flush();
    await this.scheduleAlarm();
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const row = this.store.issue();
    if (row) {
      for (const timer of this.store.timers().filter((t) => t.dueAt <= now)) {
        // An earlier timer of this run may have moved the issue on and cleared this one.
        const armed = this.store.timers().some((t) => t.kind === timer.kind && t.armedSeq === timer.armedSeq);
        if (!armed) continue;
        const recorded = this.ctx.storage.transactionSync(() => {
          this.store.deleteTimer(timer.kind);
          return this.record(
            {
              id: `timer:${timer.kind}:${timer.armedSeq}`,
              project: row.project,
              number: row.number,
              cause: { kind: "timer", id: `${timer.kind}@${timer.armedSeq}` },
              event: { type: "timeout", timer: timer.kind },
            },
            now,
          );
        });
        if (!recorded.duplicate) notifyWatchers(this.ctx, { seq: recorded.seq, state: recorded.state });
      }
      const keep = retentionMs(row.limits.retentionDays);
      this.ctx.storage.transactionSync(() => this.retention.prune(now, keep));
    }
    await this.flush();
    await this.scheduleAlarm();
  }

  private record(envelope: EventEnvelope, now: number): Extract<ApplyResult, { seq: number }> {
    const seen = this.store.historyEntry(envelope.id);
    if (seen) {
      return { duplicate: true, seq: seen.seq, outcome: seen.outcome, state: seen.to, reason: seen.reason };
    }
    const row: IssueRow = this.store.issue() ?? IssueStore.fresh(envelope.project, envelope.number);
    if (envelope.limits) row.limits = envelope.limits;
    if (envelope.timeouts) row.timeouts = { ...row.timeouts, ...envelope.timeouts };

    const from = row.context.state;
    const outcome = transition(row.context, envelope.event, row.limits);
    const seq = row.seq + 1;
    const entry: HistoryEntry = {
      seq,
      eventId: envelope.id,
      event: envelope.event.type,
      from,
      to: outcome.ok ? outcome.next.state : from,
      outcome: outcome.ok ? "applied" : "rejected",
      reason: outcome.ok ? outcome.next.reason : outcome.reason,
      cause: envelope.cause,
      at: now,
    };
    this.store.appendHistory(entry);

    if (outcome.ok) {
      row.context = outcome.next;
      const edge = {
        from,
        to: outcome.next.state,
        event: envelope.event,
        seq,
        now,
        keepsWorktree: retainsWorktree(outcome.next),
        kind: outcome.next.kind ?? "code",
      };
      this.store.replaceTimers(armTimers(edge, this.store.timers(), row.timeouts));
      for (const [index, effect] of outcome.effects.entries()) {
        const key = `${row.project}#${row.number}:${seq}:${index}`;
        this.outbox.enqueue(effectChannel(effect.kind), { key, effect }, now);
      }
    }
    row.seq = seq;
    this.store.saveIssue(row);
    this.outbox.enqueue("d1", toD1Record(row, entry, outcome.ok, envelope.delivery), now);
    return { duplicate: false, seq, outcome: entry.outcome, state: entry.to, reason: entry.reason };
  }

  /** D1 and the effect lanes are delivered independently: a slow forge never delays the D1 record. */
  private async flush(): Promise<void> {
    const inUse = this.outbox.channelsInUse();
    const busy = this.lanes.filter((lane) => lane.channels.some((channel) => inUse.has(channel)));
    // The D1 record (a read model) starts a moment later: the lanes that move the issue on, and the answer
    // of the call that wrote the rows, go first where they share a thread with D1 (the local runtime).
    const d1 = afterYield().then(() => this.d1.run());
    await Promise.all([d1, ...busy.map((lane) => lane.flight.run())]);
  }

  private async flushD1(): Promise<void> {
    for (;;) {
      const rows = this.outbox.due(["d1"], Date.now(), D1_BATCH);
      if (rows.length === 0) return;
      const ids = rows.map((r) => r.id);
      try {
        await writeRecords(
          this.env.DB,
          rows.map((r) => JSON.parse(r.payload) as D1Record),
        );
      } catch (error) {
        this.ctx.storage.transactionSync(() => this.outbox.postpone(ids, Date.now(), errorMessage(error)));
        return;
      }
      this.ctx.storage.transactionSync(() => this.outbox.ack(ids));
    }
  }

  /** One lane, strictly in order: stops at the first row not yet due or failing. */
  private async deliverLane(channels: string[]): Promise<void> {
    for (;;) {
      const head = this.outbox.head(channels);
      if (!head || head.nextAt > Date.now()) return;
      const { effect, key } = JSON.parse(head.payload) as { effect: Effect; key: string };
      const issue = this.summary();
      const deliver = DELIVERERS[effect.kind] as Deliverer<typeof effect.kind> | undefined;
      if (!issue || !deliver) return;
      let followUp: LifecycleEvent | undefined;
      try {
        followUp = await deliver(effect as never, { env: this.env, key, issue });
      } catch (error) {
        const failure = failureOf(error);
        const attempts = head.attempts + 1;
        const max = this.store.issue()?.limits.maxEffectAttempts ?? DEFAULT_MAX_EFFECT_ATTEMPTS;
        if (!deadLetters(classifyFailure(failure), attempts, max)) {
          this.ctx.storage.transactionSync(() =>
            this.outbox.postpone([head.id], Date.now(), failure.message),
          );
          return;
        }
        // Given up on: kept with its error, the issue escalates, and the lane goes on with what follows.
        const recorded = this.ctx.storage.transactionSync(() => {
          const now = Date.now();
          this.outbox.ack([head.id]);
          this.deadLetters.add({ ...head, attempts }, failure.message, now);
          const { project, number } = issue;
          const event = {
            type: "effect_failed" as const,
            effect: effect.kind,
            error: failure.message.slice(0, 2_000),
          };
          const cause = { kind: "system" as const, id: key };
          // The row's own id: a redelivered effect that fails again is heard of again.
          return this.record({ id: `${key}:dead:${head.id}`, project, number, cause, event }, now);
        });
        if (!recorded.duplicate) notifyWatchers(this.ctx, { seq: recorded.seq, state: recorded.state });
        continue;
      }
      this.ctx.storage.transactionSync(() => {
        this.outbox.ack([head.id]);
        if (followUp) {
          const { project, number } = issue;
          const cause = { kind: "system" as const, id: key };
          this.record({ id: `${key}:result`, project, number, cause, event: followUp }, Date.now());
        }
      });
    }
  }

  /** `floor`: the outbox's rows are being delivered now; the alarm is their safety net from then on. */
  private async scheduleAlarm(floor?: number): Promise<void> {
    const row = this.store.issue();
    await armAlarm(this.ctx.storage, [
      this.store.timers()[0]?.dueAt,
      row ? this.retention.nextDue(retentionMs(row.limits.retentionDays)) : null,
      outboxAlarm(this.outbox.nextAt(["d1", ...deliveredEffectChannels()]), floor),
    ]);
  }
}

function toD1Record(
  row: IssueRow,
  entry: HistoryEntry,
  applied: boolean,
  delivery: EventEnvelope["delivery"],
): D1Record {
  const c = row.context;
  return {
    ...(delivery && {
      delivery: { ...delivery, projectId: row.project, outcome: "processed", receivedAt: entry.at },
    }),
    transition: {
      projectId: row.project,
      number: row.number,
      seq: entry.seq,
      fromState: entry.from,
      toState: entry.to,
      event: entry.event,
      eventId: entry.eventId,
      causeKind: entry.cause.kind,
      causeId: entry.cause.id,
      outcome: entry.outcome,
      reason: entry.reason,
      at: entry.at,
    },
    ...(applied && {
      issue: {
        projectId: row.project,
        number: row.number,
        state: c.state,
        iteration: c.iteration,
        branch: c.branch,
        sessionId: c.sessionId,
        headSha: c.headSha,
        prNumber: c.prNumber,
        reason: c.reason,
        seq: entry.seq,
        updatedAt: entry.at,
      },
    }),
  };
}

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

const D1_YIELD_MS = 2;
const afterYield = () => new Promise((resolve) => setTimeout(resolve, D1_YIELD_MS));

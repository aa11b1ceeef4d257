/**
 * One Durable Object per issue, a facade over its concerns: events applied through the pure table and
 * recorded with everything they cause, early ones parked (./event-log.ts), the outbox sent lane by lane
 * (./effect-delivery.ts), dead letters an operator may send again (./dead-letters.ts), effects dropped
 * undelivered (./dropped-effects.ts), retention (./retention.ts), what its sessions are seen doing
 * (./session-activity.ts) and the pages watching it (./watchers.ts). Its single alarm fires the lifecycle's
 * timers, expires parked events, prunes history, and is the safety net of the outbox.
 */
import { DurableObject } from "cloudflare:workers";
import type {
  ApplyResult,
  IssueObject,
  IssueRecordTable,
  IssueSummary,
  IssueView,
  RedeliverResult,
} from "../../src/contracts/issue-object.ts";
import type { Env } from "../../src/env.ts";
import { type EventEnvelope, envelopeSchema } from "../../src/issue-events.ts";
import { type ActivityItem, activityItemSchema } from "../../src/runner-api/contract.ts";
import { zodMessage } from "../../src/validation.ts";
import { deliverSoon } from "../shared/alarm.ts";
import { Outbox } from "../shared/outbox.ts";
import { DeadLetters } from "./dead-letters.ts";
import { DroppedEffects } from "./dropped-effects.ts";
import { EffectDelivery } from "./effect-delivery.ts";
import { EventLog } from "./event-log.ts";
import { IssueStore } from "./issue-store.ts";
import { Retention, retentionMs } from "./retention.ts";
import { SessionActivity } from "./session-activity.ts";
import { acceptWatcher, notifyWatchers, recordedNews, type WatcherNews } from "./watchers.ts";

const HISTORY_LIMIT = 500;
/** Dead letters, and effects dropped undelivered, the issue's view shows. */
const DEAD_LETTERS_SHOWN = 20;
/** The session steps an issue page shows. */
const ACTIVITY_SHOWN = 200;

export class IssueDO extends DurableObject<Env> implements IssueObject {
  private readonly store: IssueStore;
  private readonly outbox: Outbox;
  private readonly events: EventLog;
  private readonly deadLetters: DeadLetters;
  private readonly dropped: DroppedEffects;
  private readonly retention: Retention;
  private readonly activity: SessionActivity;
  private readonly delivery: EffectDelivery;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const { storage } = ctx;
    this.store = new IssueStore(storage.sql);
    this.outbox = new Outbox(storage.sql);
    this.events = new EventLog(storage, this.store, this.outbox);
    this.deadLetters = new DeadLetters(storage.sql);
    this.dropped = new DroppedEffects(storage.sql);
    this.retention = new Retention(storage.sql);
    this.activity = new SessionActivity(storage.sql);
    const { store, outbox, events, deadLetters, dropped, retention } = this;
    this.delivery = new EffectDelivery(storage, env, {
      store,
      outbox,
      events,
      deadLetters,
      dropped,
      retention,
      notify: (news) => notifyWatchers(ctx, news),
    });
    // After a crash between a commit and its setAlarm, the next wake-up re-arms delivery. An object without
    // an issue row has recorded nothing (outbox rows and timers are written with it): nothing to re-arm.
    if (this.store.issue()) ctx.blockConcurrencyWhile(() => this.delivery.arm());
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
    const result = this.ctx.storage.transactionSync(() => this.events.record(envelope, Date.now()));
    if (!result.duplicate) {
      this.notify(recordedNews(result));
      // Deliver now rather than one alarm later (and beside an alarm still busy with a slow lane).
      await deliverSoon(
        this.ctx,
        (floor) => this.delivery.arm(floor),
        () => this.delivery.flush(),
      );
    }
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

  summary(): IssueSummary | null {
    return this.store.summary();
  }

  view(): IssueView | null {
    const summary = this.store.summary();
    if (!summary) return null;
    return {
      ...summary,
      timers: this.store.timers(),
      outbox: this.outbox.stats(),
      deadLetters: this.deadLetters.list(DEAD_LETTERS_SHOWN),
      droppedEffects: this.dropped.list(DEAD_LETTERS_SHOWN),
      history: this.store.history(HISTORY_LIMIT),
      activity: this.activity.latest(ACTIVITY_SHOWN),
    };
  }

  /**
   * An operator sends dead letter `id` again (once whatever the forge refused is fixed: a token's rights, a
   * deleted label). It goes to the end of its lane and acts only while what it was decided on still holds;
   * failing for good again, it is a dead letter again and the issue hears of it again.
   */
  async redeliver(id: number): Promise<RedeliverResult> {
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
    this.notify({ activity: parsed.data.length });
  }

  recordsChanged(tables: readonly IssueRecordTable[]): void {
    this.notify({ records: tables });
  }

  /** The project's merge turn is this issue's: its merge waiting in the outbox goes now (in the background). */
  mergeTurn(): void {
    if (this.store.issue()) this.ctx.waitUntil(this.delivery.hasten("merge"));
  }

  /** Delivers whatever is due now; resolves when that attempt (or the one already running) ends. */
  async drain(): Promise<void> {
    await this.delivery.flush();
    await this.delivery.arm();
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const row = this.store.issue();
    if (row) {
      for (const recorded of this.events.fireDueTimers(now))
        if (!recorded.duplicate) this.notify(recordedNews(recorded));
      for (const recorded of this.events.expireParked(now)) this.notify(recordedNews(recorded));
      const keep = retentionMs(row.limits.retentionDays);
      this.ctx.storage.transactionSync(() => this.retention.prune(now, keep));
    }
    await this.delivery.flush();
    await this.delivery.arm();
  }

  private notify(news: WatcherNews): void {
    notifyWatchers(this.ctx, news);
  }
}

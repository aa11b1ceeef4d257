/**
 * The IssueDO's outbox, sent: its D1 records in batches, and its effects lane by lane, each lane strictly in
 * order and on its own (a lane stuck on a slow forge never holds back another, nor the D1 record). An effect
 * refused for good, or failing past the project's `effects.maxAttempts`, becomes a dead letter and escalates
 * the issue, and its lane goes on. What a deliverer learns (a pull request's number) is recorded as an event
 * with the acknowledgement.
 */

import { retryPolicy } from "../../src/domain/backoff.ts";
import { staleEffect } from "../../src/domain/effect-basis.ts";
import { forgeUnreachable } from "../../src/domain/escalation.ts";
import { classifyFailure, deadLetters, failureOf, polls, waitUntil } from "../../src/domain/failure.ts";
import { DEFAULT_MAX_EFFECT_ATTEMPTS, type Effect, type LifecycleEvent } from "../../src/domain/lifecycle.ts";
import type { Env } from "../../src/env.ts";
import { errorMessage } from "../../src/error-message.ts";
import { armAlarm, outboxAlarm } from "../shared/alarm.ts";
import type { Outbox } from "../shared/outbox.ts";
import { type D1Record, writeRecords } from "./d1-sink.ts";
import type { DeadLetters } from "./dead-letters.ts";
import type { DroppedEffects } from "./dropped-effects.ts";
import {
  DELIVERERS,
  type Deliverer,
  EffectDropped,
  effectChannel,
  laneChannels,
} from "./effects/deliverers.ts";
import type { EffectRow, EventLog } from "./event-log.ts";
import type { IssueStore } from "./issue-store.ts";
import { type Retention, retentionMs } from "./retention.ts";
import { SingleFlight } from "./single-flight.ts";
import { recordedNews, type WatcherNews } from "./watchers.ts";

const D1_BATCH = 50;
/** Writers put back to the same moment come back a little apart, not all at once. */
const SPREAD_MS = 1_000;
const spread = () => Math.floor(Math.random() * SPREAD_MS);
const D1_YIELD_MS = 2;
const afterYield = () => new Promise((resolve) => setTimeout(resolve, D1_YIELD_MS));

/** What delivery reads and writes of its object. */
export type DeliveryParts = {
  store: IssueStore;
  outbox: Outbox;
  events: EventLog;
  deadLetters: DeadLetters;
  dropped: DroppedEffects;
  retention: Retention;
  /** Pages watching the issue hear of an event recorded here, and of each effect delivered or retried. */
  notify(news: WatcherNews): void;
};

export class EffectDelivery {
  private readonly d1 = new SingleFlight(() => this.flushD1());
  /** One delivery run per effect lane. */
  private readonly lanes = laneChannels().map((channels) => ({
    channels,
    flight: new SingleFlight(() => this.deliverLane(channels)),
  }));

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly parts: DeliveryParts,
  ) {}

  /** D1 and the effect lanes are delivered independently: a slow forge never delays the D1 record. */
  async flush(): Promise<void> {
    const inUse = this.parts.outbox.channelsInUse();
    const busy = this.lanes.filter((lane) => lane.channels.some((channel) => inUse.has(channel)));
    // The D1 record (a read model) starts a moment later: the lanes that move the issue on, and the answer
    // of the call that wrote the rows, go first where they share a thread with D1 (the local runtime).
    const d1 = afterYield().then(() => this.d1.run());
    await Promise.all([d1, ...busy.map((lane) => lane.flight.run())]);
  }

  /**
   * What the effects of `kind` wait for came (a merge's turn): they go now rather than at their next backoff.
   * After the lane's run under way, which may be the very attempt about to be put off for want of it.
   */
  async hasten(kind: Effect["kind"]): Promise<void> {
    const channel = effectChannel(kind);
    const lane = this.lanes.find((l) => l.channels.includes(channel));
    await lane?.flight.idle();
    this.storage.transactionSync(() => this.parts.outbox.hasten([channel], Date.now()));
    await this.flush();
    await this.arm();
  }

  /** `floor`: the outbox's rows are being delivered now; the alarm is their safety net from then on. */
  async arm(floor?: number): Promise<void> {
    const { store, retention, outbox, events } = this.parts;
    const row = store.issue();
    await armAlarm(this.storage, [
      store.timers()[0]?.dueAt,
      events.nextParkedExpiry(),
      row ? retention.nextDue(retentionMs(row.limits.retentionDays)) : null,
      outboxAlarm(outbox.nextAt(["d1"]), floor),
      // Each lane when its head comes due: what waits behind a retried head waits for it.
      ...this.lanes.map(({ channels }) => outboxAlarm(outbox.nextInOrder(channels), floor)),
    ]);
  }

  /** Dead letters `ids` back in the outbox where they were; delivered from the next flush on. */
  private resend(ids: readonly number[]): void {
    const { deadLetters, outbox } = this.parts;
    this.storage.transactionSync(() => {
      const now = Date.now();
      for (const id of ids) {
        const letter = deadLetters.take(id);
        if (letter) outbox.restore({ id, channel: letter.channel, payload: letter.payload }, now);
      }
    });
    this.parts.notify({ outbox: "retrying" });
    // Lanes not running now pick them up; the alarm armed after this run is the safety net.
    void this.flush();
  }

  private async flushD1(): Promise<void> {
    const { outbox } = this.parts;
    for (;;) {
      const rows = outbox.due(["d1"], Date.now(), D1_BATCH);
      if (rows.length === 0) return;
      const ids = rows.map((r) => r.id);
      try {
        await writeRecords(
          this.env.DB,
          rows.map((r) => JSON.parse(r.payload) as D1Record),
        );
      } catch (error) {
        this.storage.transactionSync(() => outbox.postpone(ids, Date.now(), errorMessage(error)));
        this.parts.notify({ outbox: "retrying" });
        return;
      }
      this.storage.transactionSync(() => outbox.ack(ids));
      this.parts.notify({ outbox: "delivered" });
    }
  }

  /** One lane, strictly in order: stops at the first row not yet due or failing. */
  private async deliverLane(channels: string[]): Promise<void> {
    const { outbox, events, store } = this.parts;
    for (;;) {
      const head = outbox.head(channels);
      if (!head || head.nextAt > Date.now()) return;
      const { effect, key, basis, at } = JSON.parse(head.payload) as EffectRow;
      const issue = store.summary();
      const deliver = DELIVERERS[effect.kind] as Deliverer<typeof effect.kind> | undefined;
      if (!issue || !deliver) return;
      const { project, number } = issue;
      const cause = { kind: "system" as const, id: key };
      const recheck = () => {
        const now = store.summary();
        return now ? staleEffect(effect, basis, now) : "the issue has no record";
      };
      const drop = (reason: string) =>
        this.storage.transactionSync(() => {
          outbox.ack([head.id]);
          this.parts.dropped.add(effect.kind, reason, Date.now());
        });
      // Decided on a state, head or vault item the issue has since left: never acted on (a retry, a late
      // delivery, a dead letter sent again).
      const stale = staleEffect(effect, basis, issue);
      if (stale) {
        drop(stale);
        continue;
      }
      let followUp: LifecycleEvent | undefined;
      try {
        followUp = await deliver(effect as never, {
          env: this.env,
          key,
          issue,
          recheck,
          decidedAt: at ?? Date.now(),
          resend: (ids) => this.resend(ids),
          record: (history, letters) => ({
            history: store.history(history),
            deadLetters: this.parts.deadLetters.list(letters),
          }),
        });
      } catch (error) {
        if (error instanceof EffectDropped) {
          drop(error.message);
          continue;
        }
        const failure = failureOf(error);
        const until = waitUntil(error);
        if (until !== null) {
          // Paced, or told by the forge when to come back: not a failed attempt, and never a dead letter.
          this.storage.transactionSync(() => outbox.defer([head.id], until + spread(), failure.message));
          return;
        }
        const attempts = head.attempts + 1;
        const limits = store.issue()?.limits;
        const max = limits?.maxEffectAttempts ?? DEFAULT_MAX_EFFECT_ATTEMPTS;
        if (!deadLetters(classifyFailure(failure), attempts, max)) {
          // CI still running is polled on its own short schedule, bounded by the state's timer; a failure
          // backs off from the project's first retry (`effects.retryBaseMs`).
          const failing = { ...outbox.policy, baseMs: limits?.effectRetryBaseMs ?? outbox.policy.baseMs };
          const policy = retryPolicy(polls(failure), failing, limits?.pollMaxMs);
          this.storage.transactionSync(() => outbox.postpone([head.id], Date.now(), failure.message, policy));
          this.parts.notify({ outbox: "retrying" });
          return;
        }
        // Given up on: kept with its error, the issue escalates, and the lane goes on with what follows.
        const recorded = this.storage.transactionSync(() => {
          const now = Date.now();
          outbox.ack([head.id]);
          this.parts.deadLetters.add({ ...head, attempts }, failure.message, now);
          // A forge that did not answer may be waited for, to send it again (src/domain/escalation.ts).
          const event = {
            type: "effect_failed" as const,
            effect: effect.kind,
            error: failure.message.slice(0, 2_000),
            deadLetter: head.id,
            ...(forgeUnreachable(failure) && { transient: true as const }),
          };
          // The row's own id: a redelivered effect that fails again is heard of again.
          return events.record({ id: `${key}:dead:${head.id}`, project, number, cause, event }, now);
        });
        if (!recorded.duplicate) this.parts.notify(recordedNews(recorded));
        continue;
      }
      const recorded = this.storage.transactionSync(() => {
        outbox.ack([head.id]);
        return followUp
          ? events.record({ id: `${key}:result`, project, number, cause, event: followUp }, Date.now())
          : null;
      });
      this.parts.notify(recorded && !recorded.duplicate ? recordedNews(recorded) : { outbox: "delivered" });
    }
  }
}

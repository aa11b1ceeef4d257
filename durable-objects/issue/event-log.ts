/**
 * The IssueDO's events: each is applied through the pure lifecycle table at most once (by its id) and
 * recorded, applied or rejected, in the caller's synchronous transaction with everything it causes — the
 * history entry, the timers it arms or clears, its effects in the outbox, and its D1 record. The lifecycle's
 * timers fire through here too, as `timeout` events.
 */
import type { ApplyResult, HistoryEntry } from "../../src/contracts/issue-object.ts";
import { type RerunRecord, rerunRecords } from "../../src/domain/ci-rerun.ts";
import { awaitsLaterState, PARKING } from "../../src/domain/early-events.ts";
import { type Basis, basisOf } from "../../src/domain/effect-basis.ts";
import { type Effect, type Outcome, retainsWorktree, transition } from "../../src/domain/lifecycle.ts";
import { leavesMergePath, MERGE_PATH } from "../../src/domain/merge-queue.ts";
import { armTimers } from "../../src/domain/timers.ts";
import type { EventEnvelope } from "../../src/issue-events.ts";
import type { Outbox } from "../shared/outbox.ts";
import type { D1Record } from "./d1-sink.ts";
import { effectChannel } from "./effects/deliverers.ts";
import { type IssueRow, IssueStore } from "./issue-store.ts";
import { ParkedEvents } from "./parked.ts";

export type Recorded = Extract<ApplyResult, { seq: number }>;

/** An effect as the outbox holds it: its key (stable over retries), what it was decided on, and when. */
export type EffectRow = { key: string; effect: Effect; basis?: Basis; at?: number };

/** An effect's key, `<project>#<number>:<seq>:<index>`: the seq of the edge that decided it, its place there. */
const effectKey = (project: string, number: number, seq: number, index: number) =>
  `${project}#${number}:${seq}:${index}`;

/** The seq of the edge that decided the effect of `key`. */
export const seqOfEffectKey = (key: string): number => Number(key.split(":").at(-2));

export class EventLog {
  private readonly parked: ParkedEvents;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: IssueStore,
    private readonly outbox: Outbox,
  ) {
    this.parked = new ParkedEvents(storage.sql);
  }

  /**
   * Records one event (inside the caller's transaction); a known id answers as it did the first time. An
   * event a later state may accept is parked instead of rejected (src/domain/early-events.ts); an applied
   * one then lets the parked events the new state accepts apply, in the order they came.
   */
  record(envelope: EventEnvelope, now: number): Recorded {
    const seen = this.store.historyEntry(envelope.id);
    if (seen) {
      return { duplicate: true, seq: seen.seq, outcome: seen.outcome, state: seen.to, reason: seen.reason };
    }
    const waiting = this.parked.byId(envelope.id);
    const row: IssueRow = this.store.issue() ?? IssueStore.fresh(envelope.project, envelope.number);
    if (waiting) {
      const { seq, reason } = this.store.historyEntry(`${envelope.id}:parked`) ?? { seq: 0, reason: null };
      return { duplicate: true, seq, outcome: "parked", state: row.context.state, reason };
    }
    if (envelope.limits) row.limits = envelope.limits;
    if (envelope.timeouts) row.timeouts = { ...row.timeouts, ...envelope.timeouts };

    const outcome = transition(row.context, envelope.event, row.limits);
    const awaits = outcome.ok ? null : awaitsLaterState(row.context, envelope.event);
    if (!outcome.ok && awaits)
      return this.park(row, envelope, `${outcome.reason}; parked until ${awaits}`, now);
    const recorded = this.commit(row, envelope, outcome, now);
    if (outcome.ok) this.applyParked(now);
    return recorded;
  }

  /** The parked events whose time is up, each rejected in its own transaction, saying how long it waited. */
  expireParked(now: number): Recorded[] {
    const recorded: Recorded[] = [];
    for (const due of this.parked.list().filter((p) => p.expiresAt <= now)) {
      const result = this.storage.transactionSync(() => {
        const row = this.store.issue();
        // An earlier one applied may have let this one apply too.
        if (!row || !this.parked.byId(due.id)) return null;
        this.parked.remove(due.id);
        const outcome = transition(row.context, due.envelope.event, row.limits);
        if (outcome.ok) {
          // Taken after all (the project's limits changed since): applied, like any.
          const applied = this.commit(row, due.envelope, outcome, now);
          this.applyParked(now);
          return applied;
        }
        const waited = Math.round((now - (due.expiresAt - PARKING.ttlMs)) / 60_000);
        const reason = `${outcome.reason}; no state took it in ${waited} min parked`;
        return this.commit(row, due.envelope, { ok: false, reason }, now);
      });
      if (result) recorded.push(result);
    }
    return recorded;
  }

  nextParkedExpiry(): number | null {
    return this.parked.nextExpiry();
  }

  /** The event waits for a later state: kept, and noted in the history; its id stays unspent. */
  private park(row: IssueRow, envelope: EventEnvelope, reason: string, now: number): Recorded {
    const { delivery, ...kept } = envelope;
    const waiting = this.parked.list();
    // Over the bound, the one that waited longest gives way.
    for (const oldest of waiting.slice(0, Math.max(0, waiting.length - PARKING.max + 1))) {
      this.parked.remove(oldest.id);
      const reason = `more than ${PARKING.max} events waited for a later state; this one longest`;
      this.commit(row, oldest.envelope, { ok: false, reason }, now);
    }
    const { id, event, cause } = envelope;
    const parkedAs = {
      eventId: `${id}:parked`,
      event: event.type,
      outcome: "parked" as const,
      cause,
      at: now,
      ...ciDetail(envelope.event),
    };
    const recorded = this.note(row, { ...parkedAs, reason: reason.slice(0, 2_000) }, undefined, delivery);
    this.parked.add(kept, now + PARKING.ttlMs);
    return recorded;
  }

  /** After an applied edge: the parked events its state accepts apply; those no state can take are rejected. */
  private applyParked(now: number): void {
    for (let moved = true; moved; ) {
      moved = false;
      for (const waiting of this.parked.list()) {
        const row = this.store.issue();
        if (!row) return;
        const outcome = transition(row.context, waiting.envelope.event, row.limits);
        if (!outcome.ok && awaitsLaterState(row.context, waiting.envelope.event)) continue;
        this.parked.remove(waiting.id);
        this.commit(row, waiting.envelope, outcome, now);
        // The state moved on: what waits is looked at again from the first.
        if (outcome.ok) {
          moved = true;
          break;
        }
      }
    }
  }

  /** The event's outcome recorded: its history entry, and when applied its state, timers and effects. */
  private commit(row: IssueRow, envelope: EventEnvelope, outcome: Outcome, now: number): Recorded {
    const from = row.context.state;
    const seq = row.seq + 1;
    const { event } = envelope;
    const reruns =
      outcome.ok && event.type === "ci"
        ? rerunRecords(row.context.ciRerun, outcome.next.ciRerun, event).map((r) => rerunRow(row, r, now))
        : [];
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
      // Each effect carries what it was decided on: its deliverer acts only while that still holds.
      const basis = basisOf(outcome.next);
      // Most edges off the path are of issues that never asked to merge: nothing to tell the project.
      const leaves =
        leavesMergePath(from, outcome.next.state) &&
        (from === "merging" || this.store.mergedSinceLeaving(MERGE_PATH));
      const effects: Effect[] = [
        ...outcome.effects,
        ...(leaves ? [{ kind: "leave_merge_queue" } as const] : []),
      ];
      // A merge that waited for its turn is dropped now rather than at its next backoff: its lane goes on.
      if (leaves) this.outbox.hasten([effectChannel("merge")], now);
      for (const [index, effect] of effects.entries()) {
        const key = effectKey(row.project, row.number, seq, index);
        this.outbox.enqueue(
          effectChannel(effect.kind),
          { key, effect, basis, at: now } satisfies EffectRow,
          now,
        );
      }
    }
    const entry = {
      eventId: envelope.id,
      event: envelope.event.type,
      outcome: outcome.ok ? ("applied" as const) : ("rejected" as const),
      reason: outcome.ok ? outcome.next.reason : outcome.reason,
      cause: envelope.cause,
      at: now,
      ...ciDetail(envelope.event),
    };
    return this.note(row, entry, from, envelope.delivery, outcome.ok, reruns);
  }

  /**
   * One history entry after `row`'s last (`from` the state before it, the row's state after), with its D1
   * record; the row is saved with its new seq.
   */
  private note(
    row: IssueRow,
    what: Omit<HistoryEntry, "seq" | "from" | "to">,
    from: string = row.context.state,
    delivery?: EventEnvelope["delivery"],
    applied = false,
    ciReruns: D1Record["ciReruns"] = [],
  ): Recorded {
    const entry: HistoryEntry = { ...what, seq: row.seq + 1, from, to: row.context.state };
    this.store.appendHistory(entry);
    row.seq = entry.seq;
    this.store.saveIssue(row);
    const record = toD1Record(row, entry, applied, delivery);
    this.outbox.enqueue("d1", ciReruns.length > 0 ? { ...record, ciReruns } : record, what.at);
    return {
      duplicate: false,
      seq: entry.seq,
      outcome: entry.outcome,
      state: entry.to,
      reason: entry.reason,
    };
  }

  /** Fires the timers due by `now`, each as a `timeout` event in its own transaction; what each recorded. */
  fireDueTimers(now: number): Recorded[] {
    const row = this.store.issue();
    if (!row) return [];
    const recorded: Recorded[] = [];
    for (const timer of this.store.timers().filter((t) => t.dueAt <= now)) {
      // An earlier timer of this run may have moved the issue on and cleared this one.
      const armed = this.store.timers().some((t) => t.kind === timer.kind && t.armedSeq === timer.armedSeq);
      if (!armed) continue;
      const result = this.storage.transactionSync(() => {
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
      recorded.push(result);
    }
    return recorded;
  }
}

/** What a history entry keeps of a CI result for a human: its verdict and failing checks. */
const ciDetail = (event: EventEnvelope["event"]): Pick<HistoryEntry, "ci"> =>
  event.type === "ci" ? { ci: { result: event.result, checks: event.checks ?? [] } } : {};

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

/** A re-run's check as D1 keeps it (`ci_reruns`). */
const rerunRow = (row: IssueRow, r: RerunRecord, at: number): NonNullable<D1Record["ciReruns"]>[number] => ({
  projectId: row.project,
  number: row.number,
  headSha: r.headSha,
  round: r.round,
  checkName: r.check,
  cause: r.cause,
  result: r.result,
  requestedAt: at,
  settledAt: r.result === null ? null : at,
});

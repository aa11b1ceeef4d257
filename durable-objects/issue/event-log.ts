/**
 * The IssueDO's events: each is applied through the pure lifecycle table at most once (by its id) and
 * recorded, applied or rejected, in the caller's synchronous transaction with everything it causes — the
 * history entry, the timers it arms or clears, its effects in the outbox, and its D1 record. The lifecycle's
 * timers fire through here too, as `timeout` events.
 */
import type { ApplyResult, HistoryEntry } from "../../src/contracts/issue-object.ts";
import { retainsWorktree, transition } from "../../src/domain/lifecycle.ts";
import { armTimers } from "../../src/domain/timers.ts";
import type { EventEnvelope } from "../../src/issue-events.ts";
import type { Outbox } from "../shared/outbox.ts";
import type { D1Record } from "./d1-sink.ts";
import { effectChannel } from "./effects/deliverers.ts";
import { type IssueRow, IssueStore } from "./issue-store.ts";

export type Recorded = Extract<ApplyResult, { seq: number }>;

export class EventLog {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: IssueStore,
    private readonly outbox: Outbox,
  ) {}

  /** Records one event (inside the caller's transaction); a known id answers as it did the first time. */
  record(envelope: EventEnvelope, now: number): Recorded {
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
      ...(envelope.event.type === "ci" && {
        ci: { result: envelope.event.result, checks: envelope.event.checks ?? [] },
      }),
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

/**
 * The project's merge queue (src/domain/merge-queue.ts decides; this applies and keeps it in the ProjectDO's
 * SQLite, so a restart keeps the order and the holder). An issue joins when its merge first asks and holds
 * the turn at the head of the queue, through its update's CI and review, until its IssueDO's outbox says it
 * left the merge path, or until its bound runs out (the alarm's backstop). Whoever gets the turn is told
 * through this object's outbox, in the same transaction: its IssueDO delivers its waiting merge now instead
 * of at its next backoff.
 */
import type { MergeQueueView, MergeTurn } from "../../src/contracts/project-object.ts";
import {
  EMPTY_QUEUE,
  expire,
  expiresAt,
  type Handover,
  join,
  leave,
  type MergeQueue,
  type QueueEntry,
} from "../../src/domain/merge-queue.ts";
import type { Env } from "../../src/env.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { log } from "../../src/log.ts";
import { deliverInOrder, type Outbox } from "../shared/outbox.ts";
import type { ProjectDelivery } from "./delivery.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS merge_queue (
  position INTEGER PRIMARY KEY,
  number INTEGER NOT NULL UNIQUE,
  since INTEGER NOT NULL,
  joined_at INTEGER NOT NULL,
  hold_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS merge_turn (id INTEGER PRIMARY KEY CHECK (id = 1), held_since INTEGER NOT NULL);
`;

export const MERGE_QUEUE_CHANNELS = { turn: "merge_turn" } as const;

type Row = { number: number; since: number; joined_at: number; hold_ms: number };
/** Who is told that it holds the turn now. */
type Wake = { project: string; number: number };

export class MergeQueueBook {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly outbox: Outbox,
    private readonly env: Env,
    private readonly delivery: () => Pick<ProjectDelivery, "arm" | "soon">,
  ) {
    storage.sql.exec(SCHEMA);
  }

  /**
   * Issue `number`'s merge (decided at the edge of seq `since`) asks for the turn: where it stands. The
   * alarm is armed for the holder's bound.
   */
  async join(number: number, since: number, holdMs: number): Promise<MergeTurn> {
    const place = this.storage.transactionSync(() => {
      const decided = join(this.read(), { number, since, holdMs }, Date.now());
      this.write(decided.queue);
      return decided.place;
    });
    await this.delivery().arm();
    return place;
  }

  /** Issue `number` left the merge path at the edge of seq `since`; the next, if it now holds, is told. */
  async leave(project: string, number: number, since: number): Promise<void> {
    const woken = this.storage.transactionSync(() => {
      const now = Date.now();
      const queue = this.read();
      const handover = leave(queue, number, since, now);
      // Not in the queue (it left already: a retried delivery), or a release decided before it last asked.
      if (handover.queue === queue) return null;
      this.handOver(project, handover, now);
      return handover.woken;
    });
    if (woken !== null) await this.delivery().soon();
  }

  /** A holder past its bound loses the turn, saying so; the next is told (the alarm's flush sends it). */
  expireDue(project: string, now: number): void {
    this.storage.transactionSync(() => {
      const { expired, ...handover } = expire(this.read(), now);
      if (expired) logExpired(project, expired, handover.woken);
      this.handOver(project, handover, now);
    });
  }

  /** Read by every arming of the alarm: the holder's row only. */
  nextExpiry(): number | null {
    const holder = this.storage.sql
      .exec<{ due: number }>(
        `SELECT t.held_since + q.hold_ms AS due FROM merge_turn t, merge_queue q
         ORDER BY q.position LIMIT 1`,
      )
      .toArray()[0];
    return holder?.due ?? null;
  }

  view(): MergeQueueView {
    const queue = this.read();
    return { ...queue, expiresAt: expiresAt(queue) };
  }

  /** Tells each issue that got the turn, in order; a failed call is tried again with the outbox's backoff. */
  deliver(horizon?: number): Promise<void> {
    return deliverInOrder(
      this.storage,
      this.outbox,
      [MERGE_QUEUE_CHANNELS.turn],
      1,
      async (rows) => {
        for (const row of rows) {
          const { project, number } = JSON.parse(row.payload) as Wake;
          await issueStub(this.env, project, number).mergeTurn();
        }
      },
      horizon,
    );
  }

  private handOver(project: string, { queue, woken }: Handover, now: number): void {
    this.write(queue);
    if (woken === null) return;
    this.outbox.enqueue(MERGE_QUEUE_CHANNELS.turn, { project, number: woken } satisfies Wake, now);
  }

  private read(): MergeQueue {
    const { sql } = this.storage;
    const entries = sql
      .exec<Row>("SELECT number, since, joined_at, hold_ms FROM merge_queue ORDER BY position")
      .toArray()
      .map(
        (r): QueueEntry => ({ number: r.number, since: r.since, joinedAt: r.joined_at, holdMs: r.hold_ms }),
      );
    const turn = sql.exec<{ held_since: number }>("SELECT held_since FROM merge_turn").toArray()[0];
    return entries.length === 0 || !turn ? EMPTY_QUEUE : { entries, heldSince: turn.held_since };
  }

  private write(queue: MergeQueue): void {
    const { sql } = this.storage;
    sql.exec("DELETE FROM merge_queue");
    sql.exec("DELETE FROM merge_turn");
    for (const [position, e] of queue.entries.entries()) {
      sql.exec(
        "INSERT INTO merge_queue (position, number, since, joined_at, hold_ms) VALUES (?, ?, ?, ?, ?)",
        position,
        e.number,
        e.since,
        e.joinedAt,
        e.holdMs,
      );
    }
    if (queue.heldSince !== null)
      sql.exec("INSERT INTO merge_turn (id, held_since) VALUES (1, ?)", queue.heldSince);
  }
}

/** The turn taken back: a release was lost, or the holder is stuck; an operator should know which. */
function logExpired(project: string, expired: QueueEntry, woken: number | null): void {
  log.warn("merge turn expired: the holder neither merged nor left the merge path within its bound", {
    project,
    number: expired.number,
    boundMs: expired.holdMs,
    next: woken,
  });
}

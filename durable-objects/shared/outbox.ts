/**
 * A transactional outbox in a Durable Object's SQLite: rows are written in the same synchronous transaction
 * as the state change that caused them, and delivered later, with backoff, until acknowledged.
 */
import type { OutboxStats } from "../../src/contracts/issue-object.ts";
import { type BackoffPolicy, backoffDelay } from "../../src/domain/backoff.ts";
import { waitUntil } from "../../src/domain/failure.ts";
import { DEFAULT_EFFECT_RETRY_BASE_MS } from "../../src/domain/lifecycle.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  last_error TEXT
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (channel, next_at);
`;

export type OutboxRow = { id: number; channel: string; payload: string; attempts: number };

export const OUTBOX_BACKOFF: BackoffPolicy = {
  baseMs: DEFAULT_EFFECT_RETRY_BASE_MS,
  maxMs: 5 * 60_000,
  jitter: 0.5,
};

export class Outbox {
  constructor(
    private readonly sql: SqlStorage,
    readonly policy: BackoffPolicy = OUTBOX_BACKOFF,
  ) {
    sql.exec(SCHEMA);
  }

  enqueue(channel: string, payload: unknown, now: number): void {
    this.sql.exec(
      "INSERT INTO outbox (channel, payload, next_at) VALUES (?, ?, ?)",
      channel,
      JSON.stringify(payload),
      now,
    );
  }

  /**
   * Puts a row taken out before (a dead letter) back under its own id, so it is where it was among its
   * channel's rows, due now and with no attempts counted.
   */
  restore(row: { id: number; channel: string; payload: string }, now: number): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO outbox (id, channel, payload, next_at) VALUES (?, ?, ?, ?)",
      row.id,
      row.channel,
      row.payload,
      now,
    );
  }

  /** Due rows of the given channels, oldest first. */
  due(channels: readonly string[], now: number, limit: number): OutboxRow[] {
    if (channels.length === 0) return [];
    return this.sql
      .exec<OutboxRow>(
        `SELECT id, channel, payload, attempts FROM outbox
         WHERE channel IN (${marks(channels)}) AND next_at <= ? ORDER BY id LIMIT ?`,
        ...channels,
        now,
        limit,
      )
      .toArray();
  }

  /** The oldest rows of the given channels up to the first one not yet due: what ordered delivery may send. */
  dueInOrder(channels: readonly string[], now: number, limit: number): OutboxRow[] {
    if (channels.length === 0) return [];
    const rows = this.sql
      .exec<OutboxRow & { next_at: number }>(
        `SELECT id, channel, payload, attempts, next_at FROM outbox WHERE channel IN (${marks(channels)})
         ORDER BY id LIMIT ?`,
        ...channels,
        limit,
      )
      .toArray();
    const notDue = rows.findIndex((r) => r.next_at > now);
    return (notDue === -1 ? rows : rows.slice(0, notDue)).map(({ next_at: _, ...row }) => row);
  }

  /** The oldest row of the given channels, due or not: what strictly ordered delivery must wait for. */
  head(channels: readonly string[]): (OutboxRow & { nextAt: number }) | null {
    if (channels.length === 0) return null;
    return (
      this.sql
        .exec<OutboxRow & { nextAt: number }>(
          `SELECT id, channel, payload, attempts, next_at AS nextAt FROM outbox
           WHERE channel IN (${marks(channels)}) ORDER BY id LIMIT 1`,
          ...channels,
        )
        .toArray()[0] ?? null
    );
  }

  /**
   * When strictly ordered delivery of `channels` can next send: its oldest row's time. The rows behind a
   * postponed head are due on paper, but an alarm set for them would only find the head still waiting.
   */
  nextInOrder(channels: readonly string[]): number | null {
    return this.head(channels)?.nextAt ?? null;
  }

  /** When any of `channels`, each delivered strictly in order on its own (`deliverInOrder`), can next send. */
  nextOfEach(channels: readonly string[]): number | null {
    const heads = channels.flatMap((channel) => this.nextInOrder([channel]) ?? []);
    return heads.length === 0 ? null : Math.min(...heads);
  }

  /** The channels that hold any row: a delivery run need not look into the others. */
  channelsInUse(): Set<string> {
    return new Set(
      this.sql
        .exec<{ channel: string }>("SELECT DISTINCT channel FROM outbox")
        .toArray()
        .map((r) => r.channel),
    );
  }

  ack(ids: readonly number[]): void {
    for (const id of ids) this.sql.exec("DELETE FROM outbox WHERE id = ?", id);
  }

  /**
   * Puts rows back until `until` without counting an attempt: they were not tried (the forge's pacing said
   * "not yet", or its rate limit named when to come back). `note` says why on the page.
   */
  defer(ids: readonly number[], until: number, note: string): void {
    for (const id of ids) {
      this.sql.exec("UPDATE outbox SET next_at = ?, last_error = ? WHERE id = ?", until, note, id);
    }
  }

  /**
   * Makes the rows of `channels` waiting past `now` due now (what they waited for came, a merge's turn): their
   * backoff was only the safety net for being told.
   */
  hasten(channels: readonly string[], now: number): void {
    if (channels.length === 0) return;
    this.sql.exec(
      `UPDATE outbox SET next_at = ? WHERE channel IN (${marks(channels)}) AND next_at > ?`,
      now,
      ...channels,
      now,
    );
  }

  /**
   * Records a failed attempt; the rows come due again after the backoff for their attempt count: the
   * outbox's own, or `policy` (a poll's, src/domain/backoff.ts `retryPolicy`).
   */
  postpone(ids: readonly number[], now: number, error: string, policy = this.policy): void {
    for (const id of ids) {
      const row = this.sql
        .exec<{ attempts: number }>("SELECT attempts FROM outbox WHERE id = ?", id)
        .toArray()[0];
      if (!row) continue;
      const attempts = row.attempts + 1;
      this.sql.exec(
        "UPDATE outbox SET attempts = ?, next_at = ?, last_error = ? WHERE id = ?",
        attempts,
        now + backoffDelay(attempts, policy),
        error,
        id,
      );
    }
  }

  stats(): OutboxStats[] {
    return this.sql
      .exec<{ channel: string; pending: number; attempts: number; last_error: string | null }>(
        `SELECT channel, COUNT(*) AS pending, MAX(attempts) AS attempts, MAX(last_error) AS last_error
         FROM outbox GROUP BY channel ORDER BY channel`,
      )
      .toArray()
      .map((r) => ({
        channel: r.channel,
        pending: r.pending,
        attempts: r.attempts,
        lastError: r.last_error,
      }));
  }

  /** The earliest moment anything in `channels` is due. */
  nextAt(channels: readonly string[]): number | null {
    if (channels.length === 0) return null;
    const marks = channels.map(() => "?").join(", ");
    const row = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(next_at) AS at FROM outbox WHERE channel IN (${marks})`,
        ...channels,
      )
      .toArray()[0];
    return row?.at ?? null;
  }
}

const marks = (values: readonly unknown[]) => values.map(() => "?").join(", ");

/**
 * Sends the due rows of `channels` strictly in order, `batch` at a time, acknowledging each batch; stops when
 * the oldest row is not due yet or a send fails (that batch is postponed with backoff), so no row ever goes
 * out before an older one (a batch put off by the forge's pacing waits its turn, counting no attempt).
 * `send` must be idempotent: a batch whose acknowledgement is lost is sent again.
 * `horizon` moves "due" past now: a drain sends rows that are still waiting, backoffs included.
 */
export async function deliverInOrder(
  storage: DurableObjectStorage,
  outbox: Outbox,
  channels: readonly string[],
  batch: number,
  send: (rows: OutboxRow[]) => Promise<void>,
  horizon?: number,
): Promise<void> {
  for (;;) {
    const rows = outbox.dueInOrder(channels, horizon ?? Date.now(), batch);
    if (rows.length === 0) return;
    const ids = rows.map((r) => r.id);
    try {
      await send(rows);
    } catch (error) {
      // Paced, or told by the forge when to come back: put off without counting an attempt.
      const until = waitUntil(error);
      storage.transactionSync(() =>
        until === null
          ? outbox.postpone(ids, Date.now(), errorMessage(error))
          : outbox.defer(ids, until, errorMessage(error)),
      );
      return;
    }
    storage.transactionSync(() => outbox.ack(ids));
  }
}

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

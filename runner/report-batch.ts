import type { RunnerEvent } from "../src/runner-api/contract.ts";
import {
  MAX_REPORT_BYTES,
  MAX_REPORT_EVENTS,
  MAX_REPORT_JOBS,
  type RenewedLease,
  type ReportAnswer,
  type ReportItem,
} from "../src/runner-api/report-contract.ts";
import { ApiError, LEASE_LOST, LeaseLostError } from "./api-errors.ts";

/** Sends one report (`POST /runner/v1/report`) and returns its answers, one per item, in order. */
export type SendReport = (items: ReportItem[]) => Promise<ReportAnswer[]>;

/** How long a heartbeat waits for the others due at the same moment (their timers fire a few ms apart). */
export const GATHER_MS = 20;
/** How long a session's events may wait to ride with the runner's other reports. */
export const DEFAULT_EVENTS_WINDOW_MS = 1_000;

type Waiter<T> = { resolve: (value: T) => void; reject: (error: unknown) => void };

/** What one job has to say in the next report. */
type Pending = {
  leaseToken: string;
  renewals: Waiter<RenewedLease>[];
  events: RunnerEvent[];
  reported: Waiter<void>[];
};

/**
 * Coalesces what a runner's jobs tell the Worker — each lease's heartbeat, each session's events — into one
 * report per moment for all of them: heartbeats due together (runner/lease.ts aligns them) go in one call, and
 * events wait up to `eventsWindowMs` to ride along. An urgent one (a lease's confirmation, the check before a
 * push, a job's events before its last word) goes at once with whatever is pending. Each job's answer settles
 * its own callers: a fenced job's reject with `LeaseLostError`, as its own route's call would.
 */
export class ReportBatch {
  readonly #send: SendReport;
  readonly #eventsWindowMs: number;
  #pending = new Map<string, Pending>();
  #timer: NodeJS.Timeout | undefined;
  /** When the scheduled flush fires (`performance.now()`). */
  #flushAt = Number.POSITIVE_INFINITY;

  constructor(send: SendReport, options: { eventsWindowMs?: number } = {}) {
    this.#send = send;
    this.#eventsWindowMs = options.eventsWindowMs ?? DEFAULT_EVENTS_WINDOW_MS;
  }

  /** Renews the job's lease in the next report. */
  heartbeat(jobId: string, leaseToken: string, urgent = false): Promise<RenewedLease> {
    return new Promise((resolve, reject) => {
      this.#entry(jobId, leaseToken, 0).renewals.push({ resolve, reject });
      this.#due(urgent ? 0 : GATHER_MS);
    });
  }

  /** Carries the job's events (at most `MAX_REPORT_EVENTS`) in the next report. */
  events(jobId: string, leaseToken: string, events: RunnerEvent[], urgent = false): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = this.#entry(jobId, leaseToken, events.length);
      entry.events.push(...events);
      entry.reported.push({ resolve, reject });
      this.#due(urgent ? 0 : this.#eventsWindowMs);
    });
  }

  /** The job's entry in the next report; what is pending goes first if this would not fit beside it. */
  #entry(jobId: string, leaseToken: string, events: number): Pending {
    const entry = this.#pending.get(jobId);
    if (entry && entry.leaseToken === leaseToken && entry.events.length + events <= MAX_REPORT_EVENTS)
      return entry;
    if (entry) this.flush();
    const fresh: Pending = { leaseToken, renewals: [], events: [], reported: [] };
    this.#pending.set(jobId, fresh);
    return fresh;
  }

  /** The next report goes within `delayMs`. */
  #due(delayMs: number): void {
    const at = performance.now() + delayMs;
    if (at >= this.#flushAt) return;
    clearTimeout(this.#timer);
    this.#flushAt = at;
    this.#timer = setTimeout(() => this.flush(), delayMs);
  }

  /** Sends what is pending now. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#flushAt = Number.POSITIVE_INFINITY;
    const entries = [...this.#pending];
    this.#pending = new Map();
    for (const chunk of chunks(entries)) void this.#report(chunk);
  }

  async #report(entries: [string, Pending][]): Promise<void> {
    const items = entries.map(([jobId, p]) => ({
      jobId,
      leaseToken: p.leaseToken,
      heartbeat: p.renewals.length > 0,
      events: p.events,
    }));
    let answers: ReportAnswer[];
    try {
      answers = await this.#send(items);
      if (answers.length !== items.length) throw new ApiError(500, "the report's answer lacks jobs");
    } catch (error) {
      for (const [, p] of entries) for (const w of [...p.renewals, ...p.reported]) w.reject(error);
      return;
    }
    entries.forEach(([jobId, p], i) => {
      settle(jobId, p, answers[i] as ReportAnswer);
    });
  }
}

function settle(jobId: string, p: Pending, answer: ReportAnswer): void {
  if (!answer.ok) {
    const message = `report on job ${jobId}: HTTP ${answer.status}: ${answer.error}`;
    const error = LEASE_LOST.has(answer.status)
      ? new LeaseLostError(answer.status, message)
      : new ApiError(answer.status, message);
    for (const w of [...p.renewals, ...p.reported]) w.reject(error);
    return;
  }
  for (const w of p.reported) w.resolve();
  const { lease } = answer;
  for (const w of p.renewals) {
    if (lease) w.resolve(lease);
    else w.reject(new ApiError(500, `report on job ${jobId}: the lease was not renewed`));
  }
}

/** The entries in reports of at most `MAX_REPORT_JOBS` jobs and about `MAX_REPORT_BYTES` each. */
export function chunks<T extends [string, Pick<Pending, "events">]>(entries: T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = JSON.stringify(entry[1].events).length + 200;
    if (current.length > 0 && (current.length >= MAX_REPORT_JOBS || bytes + size > MAX_REPORT_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * The ProjectDO's own SQLite tables: the project it serves with its queue policy, and its jobs (open ones and,
 * for a while, finished ones, which keep re-delivered enqueues and late runner calls answerable). Its outbox
 * is the shared `outbox.ts`.
 */
import type { JobSpec, JobStatus, JobSummary, ProjectPolicy } from "../../../src/contracts/project-object.ts";
import { DEFAULT_EVENT_DAILY_USD, type Spend } from "../../../src/domain/budget.ts";
import type { DeadlineFields, LeasedSlot, OpenJob } from "../../../src/domain/job-queue.ts";
import { addColumns } from "../../shared/columns.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  project TEXT NOT NULL,
  policy TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL UNIQUE,
  number INTEGER NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  spec TEXT NOT NULL,
  runner_id TEXT,
  lease_token TEXT,
  lease_expires_at INTEGER,
  leased_at INTEGER,
  cancelled INTEGER NOT NULL,
  confirmed INTEGER NOT NULL DEFAULT 1,
  unconfirmed INTEGER NOT NULL DEFAULT 0,
  not_before INTEGER NOT NULL DEFAULT 0,
  affinity TEXT,
  affinity_until INTEGER NOT NULL,
  session_id TEXT,
  branch TEXT,
  head_sha TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_open ON jobs (status) WHERE status IN ('queued', 'leased');
CREATE INDEX IF NOT EXISTS jobs_by_issue ON jobs (number, leased_at);
CREATE INDEX IF NOT EXISTS jobs_waits ON jobs (status)
  WHERE status = 'leased' OR (status = 'queued' AND (affinity IS NOT NULL OR not_before > 0));
CREATE INDEX IF NOT EXISTS jobs_lease_expiry ON jobs (lease_expires_at) WHERE status = 'leased';
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs (updated_at) WHERE status IN ('done', 'failed', 'cancelled');
CREATE TABLE IF NOT EXISTS spend (
  usage_id TEXT PRIMARY KEY,
  number INTEGER NOT NULL,
  day TEXT NOT NULL,
  usd REAL NOT NULL,
  turns INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS spend_by_issue ON spend (number);
CREATE INDEX IF NOT EXISTS spend_by_day ON spend (day);
`;

const POLICY_DEFAULTS: Pick<ProjectPolicy, "confirmMs" | "maxUnconfirmed"> = {
  confirmMs: 15_000,
  maxUnconfirmed: 10,
};

/** A job as the object keeps it: its summary, its place in the queue, what it runs and its current lease. */
export type StoredJob = JobSummary & {
  /** Enqueue order. */
  seq: number;
  key: string;
  spec: JobSpec;
  /** The lease a runner must present; kept when its runner finishes the job, so a repeated finish is harmless. */
  leaseToken: string | null;
};

export type OpenStoredJob = StoredJob & { status: OpenJob["status"] };

/** A queued job as the claim's choice reads it (`queuedHeads`): an agent run's id (`runId`), else null. */
export type QueuedHead = OpenJob & { id: string; status: "queued"; runId: string | null };

type Row = Record<string, string | number | null>;

/** Thin typed access to the tables; every write method is meant to run inside `transactionSync`. */
export class JobStore {
  constructor(private readonly sql: SqlStorage) {
    addColumns(sql, "jobs", ADDED_COLUMNS);
    sql.exec(SCHEMA);
    // Its WHERE grew with the backoff (jobs_waits): the older index answers no query any more.
    sql.exec("DROP INDEX IF EXISTS jobs_deadlines");
  }

  meta(): { project: string; policy: ProjectPolicy } | null {
    const row = this.sql.exec<{ project: string; policy: string }>("SELECT * FROM meta").toArray()[0];
    if (!row) return null;
    // Policies stored before a setting existed get its default.
    const stored = JSON.parse(row.policy) as ProjectPolicy;
    const budget: ProjectPolicy["budget"] = {
      ...stored.budget,
      eventDailyUsd: stored.budget.eventDailyUsd ?? DEFAULT_EVENT_DAILY_USD,
    };
    return { project: row.project, policy: { ...POLICY_DEFAULTS, ...stored, budget } };
  }

  saveMeta(project: string, policy: ProjectPolicy): void {
    this.sql.exec(
      `INSERT INTO meta (id, project, policy) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET policy = excluded.policy`,
      project,
      JSON.stringify(policy),
    );
  }

  /** Records one usage report; a re-sent report (same id) replaces its figures instead of adding to them. */
  recordSpend(usageId: string, number: number, day: string, spend: Spend): void {
    this.sql.exec(
      `INSERT INTO spend (usage_id, number, day, usd, turns) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (usage_id) DO UPDATE SET usd = excluded.usd, turns = excluded.turns`,
      usageId,
      number,
      day,
      spend.usd,
      spend.turns,
    );
  }

  issueSpend(number: number): Spend {
    const row = this.sql
      .exec<{ usd: number | null; turns: number | null }>(
        "SELECT SUM(usd) AS usd, SUM(turns) AS turns FROM spend WHERE number = ?",
        number,
      )
      .toArray()[0];
    return { usd: row?.usd ?? 0, turns: row?.turns ?? 0 };
  }

  /** What one job spent, over its attempts (usage ids start with the job's id). */
  jobSpendUsd(jobId: string): number {
    const row = this.sql
      .exec<{ usd: number | null }>(
        "SELECT SUM(usd) AS usd FROM spend WHERE substr(usage_id, 1, ?) = ?",
        jobId.length + 1,
        `${jobId}:`,
      )
      .toArray()[0];
    return row?.usd ?? 0;
  }

  daySpendUsd(day: string): number {
    const row = this.sql
      .exec<{ usd: number | null }>("SELECT SUM(usd) AS usd FROM spend WHERE day = ?", day)
      .toArray()[0];
    return row?.usd ?? 0;
  }

  /** The runners that held (or hold) a lease on one of the jobs since `since`. */
  runnersSince(since: number): string[] {
    return this.sql
      .exec<{ runner_id: string }>(
        "SELECT DISTINCT runner_id FROM jobs WHERE runner_id IS NOT NULL AND updated_at >= ?",
        since,
      )
      .toArray()
      .map((row) => row.runner_id);
  }

  byId(id: string): StoredJob | null {
    return this.one("SELECT * FROM jobs WHERE id = ?", id);
  }

  byKey(key: string): StoredJob | null {
    return this.one("SELECT * FROM jobs WHERE key = ?", key);
  }

  /** Queued and leased jobs, in enqueue order. */
  open(): OpenStoredJob[] {
    return this.many(
      "SELECT * FROM jobs WHERE status IN ('queued', 'leased') ORDER BY seq",
    ) as OpenStoredJob[];
  }

  /** Leased jobs, in enqueue order (through jobs_waits). */
  leased(): OpenStoredJob[] {
    return this.many("SELECT * FROM jobs WHERE status = 'leased' ORDER BY seq") as OpenStoredJob[];
  }

  /**
   * Leased jobs whose lease ran out by `now`, through jobs_lease_expiry: every runner call checks, and with a
   * fleet's thousand leases reading (and parsing) them all was most of the object's time.
   */
  expiring(now: number): OpenStoredJob[] {
    return this.many(
      "SELECT * FROM jobs WHERE status = 'leased' AND lease_expires_at <= ? ORDER BY seq",
      now,
    ) as OpenStoredJob[];
  }

  /**
   * Queued jobs as the claim's choice reads them, in enqueue order: their columns, not their specs (a backlog
   * of thousands of ready jobs cost every claim as many parses); an agent run's id, which the budget and
   * urgency hooks need, read by SQLite from the spec of agent jobs alone.
   */
  queuedHeads(): QueuedHead[] {
    return this.sql
      .exec<Row>(
        `SELECT seq, id, number, kind, attempt, runner_id, affinity, affinity_until, lease_expires_at, confirmed,
           cancelled, unconfirmed, not_before,
           CASE WHEN kind = 'agent' THEN json_extract(spec, '$.agent.runId') END AS run_id
         FROM jobs WHERE status = 'queued' ORDER BY seq`,
      )
      .toArray()
      .map((row) => ({
        seq: Number(row.seq),
        id: String(row.id),
        number: Number(row.number),
        kind: String(row.kind) as QueuedHead["kind"],
        status: "queued",
        attempt: Number(row.attempt),
        runnerId: text(row.runner_id),
        affinity: text(row.affinity),
        affinityUntil: Number(row.affinity_until),
        leaseExpiresAt: int(row.lease_expires_at),
        confirmed: row.confirmed !== 0,
        cancelled: row.cancelled === 1,
        unconfirmed: Number(row.unconfirmed ?? 0),
        notBefore: Number(row.not_before ?? 0),
        runId: text(row.run_id),
      }));
  }

  queuedCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE status = 'queued'").one().n;
  }

  /** Leased jobs as the queue's choice counts them (slots, issues at work): two columns each. */
  leasedSlots(): LeasedSlot[] {
    return this.sql
      .exec<{ number: number; kind: string }>("SELECT number, kind FROM jobs WHERE status = 'leased'")
      .toArray()
      .map((row) => ({ number: row.number, kind: row.kind as LeasedSlot["kind"], status: "leased" }));
  }

  /**
   * What `nextDeadline` needs to find the queue's next moment, read on every alarm reschedule (each heartbeat
   * moves one): the earliest lease's end, and the earliest grace period and backoff still to end, each by an
   * index rather than a pass over every open job.
   */
  deadlineFields(now: number): DeadlineFields[] {
    const none = { affinity: null, affinityUntil: 0, notBefore: 0, leaseExpiresAt: null };
    const first = (query: string, ...bindings: unknown[]) =>
      this.sql.exec<{ at: number | null }>(query, ...bindings).toArray()[0]?.at ?? null;
    const lease = first("SELECT MIN(lease_expires_at) AS at FROM jobs WHERE status = 'leased'");
    const grace = first(
      "SELECT MIN(affinity_until) AS at FROM jobs WHERE status = 'queued' AND affinity IS NOT NULL AND affinity_until > ?",
      now,
    );
    const backoff = first(
      "SELECT MIN(not_before) AS at FROM jobs WHERE status = 'queued' AND not_before > ?",
      now,
    );
    return [
      ...(lease === null ? [] : [{ ...none, status: "leased" as const, leaseExpiresAt: lease }]),
      ...(grace === null ? [] : [{ ...none, status: "queued" as const, affinity: "", affinityUntil: grace }]),
      ...(backoff === null ? [] : [{ ...none, status: "queued" as const, notBefore: backoff }]),
    ];
  }

  lastRunner(number: number): string | null {
    const row = this.sql
      .exec<{ runner_id: string }>(
        `SELECT runner_id FROM jobs WHERE number = ? AND leased_at IS NOT NULL ORDER BY leased_at DESC LIMIT 1`,
        number,
      )
      .toArray()[0];
    return row?.runner_id ?? null;
  }

  recent(limit: number): StoredJob[] {
    return this.many("SELECT * FROM jobs ORDER BY seq DESC LIMIT ?", limit);
  }

  /** Inserts a new job; returns it with its enqueue order. */
  insert(job: Omit<StoredJob, "seq">): StoredJob {
    const { seq } = this.sql
      .exec<{ seq: number }>(
        `INSERT INTO jobs (id, key, number, kind, status, attempt, spec, runner_id, lease_token, lease_expires_at,
           leased_at, cancelled, confirmed, unconfirmed, not_before, affinity, affinity_until, session_id, branch,
           head_sha, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
        job.id,
        job.key,
        job.number,
        job.kind,
        job.status,
        job.attempt,
        JSON.stringify(job.spec),
        job.runnerId,
        job.leaseToken,
        job.leaseExpiresAt,
        job.leasedAt,
        Number(job.cancelled),
        Number(job.confirmed),
        job.unconfirmed,
        job.notBefore,
        job.affinity,
        job.affinityUntil,
        job.sessionId,
        job.branch,
        job.headSha,
        job.createdAt,
        job.updatedAt,
      )
      .one();
    return { ...job, seq };
  }

  /** Writes what changes over a job's life. */
  save(job: StoredJob): void {
    this.sql.exec(
      `UPDATE jobs SET status = ?, attempt = ?, runner_id = ?, lease_token = ?, lease_expires_at = ?, leased_at = ?,
         cancelled = ?, confirmed = ?, unconfirmed = ?, not_before = ?, affinity = ?, affinity_until = ?,
         session_id = ?, branch = ?, head_sha = ?, updated_at = ?
       WHERE id = ?`,
      job.status,
      job.attempt,
      job.runnerId,
      job.leaseToken,
      job.leaseExpiresAt,
      job.leasedAt,
      Number(job.cancelled),
      Number(job.confirmed),
      job.unconfirmed,
      job.notBefore,
      job.affinity,
      job.affinityUntil,
      job.sessionId,
      job.branch,
      job.headSha,
      job.updatedAt,
      job.id,
    );
  }

  /** Forgets finished jobs last changed before `before`. */
  prune(before: number): void {
    this.sql.exec(
      "DELETE FROM jobs WHERE status IN ('done', 'failed', 'cancelled') AND updated_at < ?",
      before,
    );
  }

  private one(query: string, ...bindings: unknown[]): StoredJob | null {
    return this.many(query, ...bindings)[0] ?? null;
  }

  private many(query: string, ...bindings: unknown[]): StoredJob[] {
    return this.sql
      .exec<Row>(query, ...bindings)
      .toArray()
      .map(toJob);
  }
}

/** Columns added after the table was first created. */
const ADDED_COLUMNS: Record<string, string> = {
  // Leases held when this column came are treated as confirmed: their runners heartbeat already.
  confirmed: "INTEGER NOT NULL DEFAULT 1",
  unconfirmed: "INTEGER NOT NULL DEFAULT 0",
  not_before: "INTEGER NOT NULL DEFAULT 0",
};

type Cell = Row[string] | undefined;
const text = (value: Cell) => (value === null || value === undefined ? null : String(value));
const int = (value: Cell) => (value === null || value === undefined ? null : Number(value));

function toJob(row: Row): StoredJob {
  return {
    seq: Number(row.seq),
    id: String(row.id),
    key: String(row.key),
    number: Number(row.number),
    kind: String(row.kind) as StoredJob["kind"],
    status: String(row.status) as JobStatus,
    attempt: Number(row.attempt),
    spec: JSON.parse(String(row.spec)),
    runnerId: text(row.runner_id),
    leaseToken: text(row.lease_token),
    leaseExpiresAt: int(row.lease_expires_at),
    leasedAt: int(row.leased_at),
    cancelled: row.cancelled === 1,
    confirmed: row.confirmed !== 0,
    unconfirmed: Number(row.unconfirmed ?? 0),
    notBefore: Number(row.not_before ?? 0),
    affinity: text(row.affinity),
    affinityUntil: Number(row.affinity_until),
    sessionId: text(row.session_id),
    branch: text(row.branch),
    headSha: text(row.head_sha),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * The leases the Worker itself granted, from its own record: every ProjectDO's `jobs` table in the local
 * Worker's persisted state (SQLite files under wrangler's `--persist-to` directory), read-only, sampled every
 * `intervalMs`. A job row holds only its current lease, so a lease is seen if it lived through one sample: a
 * lease nobody received lives until `jobs.confirmMs` at least, far longer than the interval.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { z } from "zod";

const leaseRow = z.object({
  jobId: z.string(),
  number: z.number(),
  attempt: z.number(),
  runnerId: z.string(),
  token: z.string(),
  leasedAt: z.number(),
});
export type WorkerLease = z.infer<typeof leaseRow>;

const endedRow = z.object({ token: z.string(), endedAt: z.number() });

export class WorkerLeaseSampler {
  /** Each lease once, as first seen. */
  readonly leases: WorkerLease[] = [];
  /**
   * When the Worker finished a leased job, by lease token: a runner killed right after its `complete` reached
   * the Worker never hears the answer, so only the Worker knows that lease ended.
   */
  readonly ended = new Map<string, number>();
  /** Samples that read the table (a sample while the Worker writes or restarts may read nothing). */
  samples = 0;
  readonly #dir: string;
  readonly #timer: NodeJS.Timeout;
  readonly #seen = new Set<string>();

  private constructor(workerStateDir: string, intervalMs: number) {
    this.#dir = join(workerStateDir, "v3", "do", "conveyor-ProjectDO");
    this.#timer = setInterval(() => this.sample(), intervalMs);
  }

  static start(workerStateDir: string, intervalMs = 100): WorkerLeaseSampler {
    return new WorkerLeaseSampler(workerStateDir, intervalMs);
  }

  sample(): void {
    if (!existsSync(this.#dir)) return;
    for (const file of readdirSync(this.#dir).filter((name) => name.endsWith(".sqlite"))) {
      let db: DatabaseSync | undefined;
      try {
        db = new DatabaseSync(join(this.#dir, file), { readOnly: true });
        const rows = db
          .prepare(
            `SELECT id AS jobId, number, attempt, runner_id AS runnerId, lease_token AS token, leased_at AS leasedAt
             FROM jobs WHERE lease_token IS NOT NULL AND leased_at IS NOT NULL`,
          )
          .all();
        const ended = db
          .prepare(
            `SELECT lease_token AS token, updated_at AS endedAt FROM jobs
             WHERE lease_token IS NOT NULL AND status IN ('done', 'failed', 'cancelled')`,
          )
          .all();
        this.samples++;
        for (const { token, endedAt } of z.array(endedRow).parse(ended)) this.ended.set(token, endedAt);
        for (const lease of z.array(leaseRow).parse(rows)) {
          if (this.#seen.has(lease.token)) continue;
          this.#seen.add(lease.token);
          this.leases.push(lease);
        }
      } catch {
        // Busy, restarting, or no jobs table yet: the next sample reads it.
      } finally {
        db?.close();
      }
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

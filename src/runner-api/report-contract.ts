/**
 * `POST /runner/v1/report`: one call per runner per period carrying what its jobs have to say — a heartbeat
 * for each lease it renews and each session's events — instead of a call per job (a fleet's heartbeats and
 * activity were most of the runner calls a project's object carried). Each job in it is fenced by its own
 * lease: a stale one is refused alone (its answer says why, with the status the job's own route would give)
 * and the others are renewed. The per-job `heartbeat` and `events` routes stay for runners older than this.
 */
import { z } from "zod";
import { diskReportSchema, hostReportSchema, pressureSchema, runnerEvent } from "./contract.ts";

/** Jobs in one report; a runner holding more sends more than one. */
export const MAX_REPORT_JOBS = 200;
/** Events of one job in one report, as in one `events` call. */
export const MAX_REPORT_EVENTS = 100;
/** What a runner puts in one report, well inside the Worker's 2 MiB body. */
export const MAX_REPORT_BYTES = 1024 * 1024;

export const reportItemSchema = z
  .object({
    jobId: z.string().min(1).max(200),
    leaseToken: z.string().min(1).max(200),
    /** Renew the lease (the first renewal confirms it), as `heartbeat` does. */
    heartbeat: z.boolean().default(false),
    /** In order, as `events` takes them. */
    events: z.array(runnerEvent).max(MAX_REPORT_EVENTS).default([]),
  })
  .refine((item) => item.heartbeat || item.events.length > 0, "a job's report renews or reports something");
export type ReportItem = z.output<typeof reportItemSchema>;

export const reportRequest = z.object({
  jobs: z
    .array(reportItemSchema)
    .min(1)
    .max(MAX_REPORT_JOBS)
    .refine(
      (jobs) => new Set(jobs.map((job) => job.jobId)).size === jobs.length,
      "a job is in the report twice",
    ),
  /** As a heartbeat's: recorded once per report, when one of its leases was renewed. */
  disk: diskReportSchema.optional(),
  host: hostReportSchema.optional(),
  pressure: pressureSchema.optional(),
});

/** A lease the report renewed, as a heartbeat answers it. */
export const renewedLeaseSchema = z.object({
  leaseExpiresAt: z.number().int(),
  leaseMs: z.number().int().positive(),
  /** The issue was abandoned: stop the session and report `fail` with `cancelled`. */
  cancelled: z.boolean(),
});
export type RenewedLease = z.infer<typeof renewedLeaseSchema>;

/** Each job's answer, in the request's order. */
export const reportAnswerSchema = z.discriminatedUnion("ok", [
  z.object({
    jobId: z.string(),
    ok: z.literal(true),
    /** Set when the item renewed the lease: as a heartbeat answers. */
    lease: renewedLeaseSchema.optional(),
  }),
  /** 403 another runner's, 404 unknown, 409 not the current lease: stop working on the job. */
  z.object({ jobId: z.string(), ok: z.literal(false), status: z.number().int(), error: z.string() }),
]);
export type ReportAnswer = z.infer<typeof reportAnswerSchema>;

export const reportResponse = z.object({ jobs: z.array(reportAnswerSchema) });

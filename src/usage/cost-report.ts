/**
 * What `GET /api/v1/costs` (every project) and `GET /api/v1/projects/:project/costs` answer: model spend per
 * UTC day and per issue over the last days. `conveyor costs` parses the answer with the same schema (this
 * module imports nothing but zod: the CLI's package has no drizzle). An issue's number 0 stands for the
 * project's agent runs, which belong to no issue.
 */
import { z } from "zod";

export const costQuerySchema = z.object({
  days: z.coerce.number().int().min(1).max(366).default(30),
  limit: z.coerce.number().int().min(1).max(500).default(20),
});
export type CostQuery = z.infer<typeof costQuerySchema>;

export const costReportSchema = z.object({
  /** Null: every project. */
  project: z.string().nullable(),
  /** The first day's start (UTC, ms); the last day is today. */
  from: z.number(),
  totalUsd: z.number(),
  /** Every day of the window, oldest first, with or without spend. */
  days: z.array(z.object({ day: z.string(), usd: z.number() })),
  /** The issues that cost most in the window, most first (at most `limit`). */
  issues: z.array(
    z.object({
      project: z.string(),
      number: z.number(),
      usd: z.number(),
      state: z.string().nullable(),
      title: z.string().nullable(),
    }),
  ),
});
export type CostReport = z.infer<typeof costReportSchema>;

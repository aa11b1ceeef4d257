/**
 * `POST /runner/v1/jobs/:id/backlog`: an agent run's read tool (`read_backlog`, runner/agents/safe-outputs.ts)
 * pages through the project's whole open backlog, the mirror the Worker keeps (src/agents/backlog.ts), under
 * the run's current lease. The query is the tool's arguments; the answer is parsed by the runner.
 */
import { z } from "zod";

export const BACKLOG_PAGE_SIZE = 25;

/** What the agent may ask for: every field narrows; none lists everything, most relevant first. */
export const backlogQueryShape = {
  text: z.string().trim().min(1).max(200).optional().describe("words that must all be in the title or body"),
  label: z.string().trim().min(1).max(100).optional().describe("only items carrying this label"),
  kind: z.enum(["issue", "pull"]).optional().describe("issues or pull requests only"),
  stale: z.boolean().optional().describe("only items with the stale or stale-dependency signal"),
  numbers: z.array(z.number().int().positive()).max(50).optional().describe("these items only"),
  sort: z
    .enum(["relevance", "updated", "oldest"])
    .optional()
    .describe("relevance (default), latest updated first, or least recently updated first"),
  page: z.number().int().min(1).max(1_000).optional().describe(`pages of ${BACKLOG_PAGE_SIZE}, from 1`),
};
export const backlogQuery = z.object(backlogQueryShape).strict();
export type BacklogQuery = z.infer<typeof backlogQuery>;

export const backlogRequest = z.object({ leaseToken: z.string(), query: backlogQuery });

const entry = z.object({
  number: z.number().int(),
  kind: z.enum(["issue", "pull"]),
  title: z.string(),
  author: z.string(),
  labels: z.array(z.string()),
  created: z.string().nullable(),
  updated: z.string().nullable(),
  idleDays: z.number().int().nullable(),
  comments: z.number().int(),
  dependsOn: z.array(z.number().int()),
  linked: z.array(z.number().int()),
  signals: z.array(z.string()).optional(),
  body: z.string().optional(),
});

export const backlogResponse = z.object({
  today: z.string(),
  page: z.number().int(),
  /** Items matching the query, over all pages. */
  matching: z.number().int(),
  more: z.boolean(),
  items: z.array(entry),
});
export type BacklogResponse = z.infer<typeof backlogResponse>;

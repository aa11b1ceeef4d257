/**
 * Operator API for issues: read one (from its Durable Object), list (from D1), send it an event, and send
 * again an effect Conveyor gave up on.
 */
import { and, asc, eq, gt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { Hono } from "hono";
import { z } from "zod";
import { criticRoundCount } from "../critic/ledger.ts";
import { issues } from "../db/schema.ts";
import { STATES } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import { lifecycleEventSchema } from "../issue-events.ts";
import { issueStub } from "../issue-stub.ts";
import { projectIdSchema } from "../projects/config.ts";
import { loadProject } from "../projects/store.ts";
import { issueCostUsd } from "../usage/cost.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";
import { applyOperatorEvent, unregisteredReason } from "./operator-events.ts";

export const issuePathSchema = z.object({
  project: projectIdSchema,
  number: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});

const listSchema = z.object({
  state: z.enum(STATES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  after: z.coerce.number().int().min(0).default(0),
});

const eventBodySchema = z.object({
  id: z.string().min(1).max(200).optional(),
  event: lifecycleEventSchema,
});

export const issueRoutes = new Hono<{ Bindings: Env }>();

issueRoutes.get("/:project/issues/:number", async (c) => {
  const path = issuePathSchema.safeParse(c.req.param());
  if (!path.success) return jsonError(c, 400, zodMessage(path.error));
  const { project, number } = path.data;
  const [view, costUsd, reviewRounds] = await Promise.all([
    issueStub(c.env, project, number).view(),
    issueCostUsd(c.env, project, number),
    criticRoundCount(c.env, project, number),
  ]);
  if (!view) {
    // An issue's record outlives its project's registration; without either, the project is what is wrong.
    const registered = await loadProject(c.env, project);
    return jsonError(
      c,
      404,
      registered ? `issue ${project}#${number} is not known to Conveyor` : unregisteredReason(project),
    );
  }
  return c.json({ ...view, costUsd, reviewRounds });
});

issueRoutes.get("/:project/issues", async (c) => {
  const project = issuePathSchema.shape.project.safeParse(c.req.param("project"));
  if (!project.success) return jsonError(c, 400, zodMessage(project.error));
  const query = listSchema.safeParse(c.req.query());
  if (!query.success) return jsonError(c, 400, zodMessage(query.error));
  const { state, limit, after } = query.data;
  const rows = await drizzle(c.env.DB)
    .select()
    .from(issues)
    .where(
      and(
        eq(issues.projectId, project.data),
        gt(issues.number, after),
        state ? eq(issues.state, state) : undefined,
      ),
    )
    .orderBy(asc(issues.number))
    .limit(limit);
  if (rows.length === 0 && after === 0 && !(await loadProject(c.env, project.data)))
    return jsonError(c, 404, unregisteredReason(project.data));
  const last = rows.at(-1);
  return c.json({ issues: rows, next: rows.length === limit && last ? last.number : null });
});

issueRoutes.post("/:project/issues/:number/events", async (c) => {
  const path = issuePathSchema.safeParse(c.req.param());
  if (!path.success) return jsonError(c, 400, zodMessage(path.error));
  const raw = await c.req.json().catch(() => undefined);
  if (raw === undefined) return jsonError(c, 400, "body must be JSON");
  const body = eventBodySchema.safeParse(raw);
  if (!body.success) return jsonError(c, 400, zodMessage(body.error));
  const { project, number } = path.data;
  const result = await applyOperatorEvent(c.env, project, number, body.data.event, body.data.id);
  if (result.outcome === "unregistered") return jsonError(c, 404, result.reason);
  if (result.outcome === "invalid") return jsonError(c, 400, result.reason);
  if (result.outcome === "rejected") return c.json({ error: result.reason ?? "rejected", ...result }, 409);
  return c.json(result);
});

export const deadLetterPathSchema = issuePathSchema.extend({
  id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});

/** Sends a dead-lettered effect of the issue again (its id is in the issue's `deadLetters`). */
issueRoutes.post("/:project/issues/:number/dead-letters/:id/redeliver", async (c) => {
  const path = deadLetterPathSchema.safeParse(c.req.param());
  if (!path.success) return jsonError(c, 400, zodMessage(path.error));
  const { project, number, id } = path.data;
  const result = await issueStub(c.env, project, number).redeliver(id);
  if (!result.ok) return jsonError(c, 404, `${project}#${number}: ${result.error}`);
  return c.json({ redelivered: id, kind: result.kind }, 202);
});

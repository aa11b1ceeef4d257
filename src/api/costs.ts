/**
 * `GET /api/v1/costs` and `GET /api/v1/projects/:project/costs` (`?days=30&limit=20`): model spend per UTC
 * day and the issues that cost most, of every project or of one (src/usage/cost-report.ts). A project that is
 * no longer registered keeps its costs; one Conveyor never knew is a 404.
 */
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { projectIdSchema } from "../projects/config.ts";
import { loadProject } from "../projects/store.ts";
import { costReport, hasSpend } from "../usage/cost.ts";
import { costQuerySchema } from "../usage/cost-report.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";
import { unregisteredReason } from "./operator-events.ts";

export const costRoutes = new Hono<{ Bindings: Env }>();

costRoutes.get("/costs", async (c) => {
  const query = costQuerySchema.safeParse(c.req.query());
  if (!query.success) return jsonError(c, 400, zodMessage(query.error));
  return c.json(await costReport(c.env, null, query.data));
});

costRoutes.get("/projects/:project/costs", async (c) => {
  const project = projectIdSchema.safeParse(c.req.param("project"));
  if (!project.success) return jsonError(c, 400, zodMessage(project.error));
  const query = costQuerySchema.safeParse(c.req.query());
  if (!query.success) return jsonError(c, 400, zodMessage(query.error));
  const [registered, spent] = await Promise.all([
    loadProject(c.env, project.data),
    hasSpend(c.env, project.data),
  ]);
  if (!registered && !spent) return jsonError(c, 404, unregisteredReason(project.data));
  return c.json(await costReport(c.env, project.data, query.data));
});

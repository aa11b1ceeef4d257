/**
 * Operator API for the project's supervisor (docs/supervisor.md): `GET /:project/health`, the findings that
 * stand and when it last checked; `POST /:project/health/check`, a check now (then it keeps to its period).
 */
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import { projectIdSchema } from "../projects/config.ts";
import { loadProject } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";

export const healthRoutes = new Hono<{ Bindings: Env }>();

healthRoutes.get("/:project/health", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  if (!(await loadProject(c.env, id.data))) return jsonError(c, 404, `project ${id.data} is not registered`);
  const { project: _, ...health } = await projectStub(c.env, id.data).health();
  return c.json({ project: id.data, ...health });
});

healthRoutes.post("/:project/health/check", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  const project = await loadProject(c.env, id.data);
  if (!project) return jsonError(c, 404, `project ${id.data} is not registered`);
  const stub = projectStub(c.env, id.data);
  const run = await stub.superviseNow(id.data, project.settings.supervisor.periodMs);
  if (run && "error" in run) return jsonError(c, 502, run.error);
  const { project: _, ...health } = await stub.health();
  return c.json({ project: id.data, ...health });
});

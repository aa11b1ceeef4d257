/** Operator API: the project registry. Secrets go in and are never returned. */
import { Hono } from "hono";
import { SecretsKeyError } from "../crypto/secrets.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import { forgetProject } from "../projects/cache.ts";
import { projectIdSchema, registrationSchema } from "../projects/config.ts";
import { deleteProject, listProjects, loadProject, saveProject } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";

export const projectRoutes = new Hono<{ Bindings: Env }>();

projectRoutes.get("/", async (c) => c.json({ projects: await listProjects(c.env) }));

projectRoutes.put("/:project", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  const raw = await c.req.json().catch(() => undefined);
  if (raw === undefined) return jsonError(c, 400, "body must be JSON");
  const registration = registrationSchema.safeParse(raw);
  if (!registration.success) return jsonError(c, 400, zodMessage(registration.error));
  const existed = (await loadProject(c.env, id.data)) !== null;
  try {
    const project = await saveProject(c.env, id.data, registration.data);
    forgetProject(id.data);
    // Reconciliation starts a period after registration (the webhook setup comes first); the cron is the net.
    await projectStub(c.env, id.data).armReconciliation(id.data, project.settings.reconcile.periodMs);
    return c.json(project, existed ? 200 : 201);
  } catch (error) {
    if (error instanceof SecretsKeyError) return jsonError(c, 503, error.message);
    throw error;
  }
});

projectRoutes.get("/:project", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  const project = await loadProject(c.env, id.data);
  if (!project) return jsonError(c, 404, `project ${id.data} is not registered`);
  return c.json({ ...project, dispatch: await projectStub(c.env, id.data).dispatchStatus() });
});

projectRoutes.delete("/:project", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  forgetProject(id.data);
  return (await deleteProject(c.env, id.data))
    ? c.body(null, 204)
    : jsonError(c, 404, `project ${id.data} is not registered`);
});

/** Operator API: the project registry. Secrets go in and are never returned. */
import { Hono } from "hono";
import { z } from "zod";
import { SecretsKeyError } from "../crypto/secrets.ts";
import { credentialsChanged, credentialsOf } from "../domain/backfill.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import { forgetProject } from "../projects/cache.ts";
import { projectIdSchema, registrationSchema } from "../projects/config.ts";
import { editSetting } from "../projects/setting-edit.ts";
import {
  deleteProject,
  listProjects,
  loadProject,
  loadRegistered,
  saveProject,
  saveSettings,
} from "../projects/store.ts";
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
  try {
    const before = await loadRegistered(c.env, id.data);
    const existed = before !== null;
    const project = await saveProject(c.env, id.data, registration.data);
    forgetProject(id.data);
    // Reconciliation starts a period after registration (the webhook setup comes first); the cron is the net.
    const { reconcile, supervisor } = project.settings;
    const stub = projectStub(c.env, id.data);
    await stub.armReconciliation(id.data, reconcile.periodMs, supervisor.periodMs);
    // The mirror fills with the repository's open issues and pull requests at once (docs/agents.md); a
    // project registered before the backfill existed gets its first when it is registered again, and one the
    // forge refused for good its next when the credentials it refused changed.
    const { phase } = before ? await stub.backfillMirror(id.data) : { phase: "idle" };
    const retry =
      phase === "refused" &&
      before !== null &&
      credentialsChanged(
        // Old secrets that no longer open (another key) are other credentials.
        credentialsOf(before.project, (await before.secrets().catch(() => null))?.forgeToken ?? ""),
        credentialsOf(registration.data, registration.data.forgeToken),
      );
    if (phase === "idle" || retry) await stub.backfillMirror(id.data, { start: true });
    return c.json(project, existed ? 200 : 201);
  } catch (error) {
    if (error instanceof SecretsKeyError) return jsonError(c, 503, error.message);
    throw error;
  }
});

/** `{ key, value }`: a string value is also read as JSON (`"4"` → 4), as a command line types it. */
const settingBodySchema = z.object({ key: z.string().min(1).max(200), value: z.unknown() });

// One setting at a time, validated by the registration's own schema: `conveyor project set <key> <value>`.
projectRoutes.patch("/:project/settings", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  const raw = await c.req.json().catch(() => undefined);
  if (raw === undefined) return jsonError(c, 400, "body must be JSON");
  const body = settingBodySchema.safeParse(raw);
  if (!body.success) return jsonError(c, 400, zodMessage(body.error));
  const project = await loadProject(c.env, id.data);
  if (!project) return jsonError(c, 404, `project ${id.data} is not registered`);
  const edit = editSetting(project.settings, body.data.key, body.data.value);
  if (!edit.ok) return jsonError(c, 400, edit.reason);
  const saved = await saveSettings(c.env, id.data, edit.settings);
  if (!saved) return jsonError(c, 404, `project ${id.data} is not registered`);
  forgetProject(id.data);
  return c.json(saved);
});

projectRoutes.get("/:project", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  const project = await loadProject(c.env, id.data);
  if (!project) return jsonError(c, 404, `project ${id.data} is not registered`);
  const stub = projectStub(c.env, id.data);
  const [dispatch, mergeQueue] = await Promise.all([stub.dispatchStatus(), stub.mergeQueue()]);
  return c.json({ ...project, dispatch, mergeQueue });
});

projectRoutes.delete("/:project", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  forgetProject(id.data);
  return (await deleteProject(c.env, id.data))
    ? c.body(null, 204)
    : jsonError(c, 404, `project ${id.data} is not registered`);
});

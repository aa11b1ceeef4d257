/**
 * Operator API for the mirror's backfill (docs/agents.md): `GET /:project/backfill`, where it stands;
 * `POST /:project/backfill`, a backfill of every open issue and pull request now, unless one is under way.
 */
import { type Context, Hono } from "hono";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import { projectIdSchema } from "../projects/config.ts";
import { loadProject } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";

export const backfillRoutes = new Hono<{ Bindings: Env }>();

backfillRoutes.get("/:project/backfill", (c) => answer(c, false));
backfillRoutes.post("/:project/backfill", (c) => answer(c, true));

async function answer(c: Context<{ Bindings: Env }>, start: boolean) {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  if (!(await loadProject(c.env, id.data))) return jsonError(c, 404, `project ${id.data} is not registered`);
  const status = await projectStub(c.env, id.data).backfillMirror(id.data, { start });
  return c.json({ ...status, project: id.data }, start ? 202 : 200);
}

/** Operator API for runners: registration tokens to hand to new runners, who is running what, revocation. */
import { Hono } from "hono";
import { z } from "zod";
import type { Env } from "../env.ts";
import { projectIdSchema } from "../projects/config.ts";
import { createRegistrationToken, listRunners, runnerIdSchema } from "../runner-api/registry.ts";
import { revokeRunner } from "../runner-api/revoke.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";
import { jsonBody } from "./json-body.ts";

const tokenRequest = z.object({
  ttlSeconds: z
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 60 * 60)
    .default(60 * 60),
  /** Bind the runner it registers to these projects: it claims their jobs only. */
  projects: z
    .array(projectIdSchema)
    .min(1)
    .max(100)
    .transform((ids) => [...new Set(ids)])
    .optional(),
});

export const runnerAdminRoutes = new Hono<{ Bindings: Env }>();

runnerAdminRoutes.post("/tokens", async (c) => {
  const body = await jsonBody(c, tokenRequest);
  if (!body.ok) return body.response;
  const { ttlSeconds, projects } = body.data;
  return c.json(await createRegistrationToken(c.env, ttlSeconds * 1000, projects ?? null), 201);
});

runnerAdminRoutes.get("/", async (c) => c.json({ runners: await listRunners(c.env) }));

runnerAdminRoutes.delete("/:id", async (c) => {
  const id = runnerIdSchema.safeParse(c.req.param("id"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  if (!(await revokeRunner(c.env, id.data))) return jsonError(c, 404, `runner ${id.data} is unknown`);
  return c.body(null, 204);
});

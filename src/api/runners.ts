/** Operator API for runners: registration tokens to hand to new runners, and who is running what. */
import { Hono } from "hono";
import { z } from "zod";
import type { Env } from "../env.ts";
import { createRegistrationToken, listRunners } from "../runner-api/registry.ts";
import { jsonBody } from "./json-body.ts";

const tokenRequest = z.object({
  ttlSeconds: z
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 60 * 60)
    .default(60 * 60),
});

export const runnerAdminRoutes = new Hono<{ Bindings: Env }>();

runnerAdminRoutes.post("/tokens", async (c) => {
  const body = await jsonBody(c, tokenRequest);
  if (!body.ok) return body.response;
  return c.json(await createRegistrationToken(c.env, body.data.ttlSeconds * 1000), 201);
});

runnerAdminRoutes.get("/", async (c) => c.json({ runners: await listRunners(c.env) }));

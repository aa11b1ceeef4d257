/** `GET /api/v1/status`: projects with their issues per state, and the runners: what `conveyor status` shows. */
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { listRunners } from "../runner-api/registry.ts";
import { projectSummaries } from "./project-summaries.ts";

export const statusRoutes = new Hono<{ Bindings: Env }>();

statusRoutes.get("/status", async (c) => {
  const [projects, runners] = await Promise.all([projectSummaries(c.env), listRunners(c.env)]);
  return c.json({ projects, runners });
});

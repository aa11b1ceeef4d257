/** Operator API for the project's agents: the catalog with each agent's last run, manual runs, a run's outcome. */
import { Hono } from "hono";
import { z } from "zod";
import { AGENT_NAME } from "../agents/definition.ts";
import { queueAgentRun, readCatalog } from "../agents/runs.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import { projectIdSchema } from "../projects/config.ts";
import { loadRegistered } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";

const agentPath = z.object({ project: projectIdSchema, name: z.string().regex(AGENT_NAME) });
const runPath = agentPath.extend({ id: z.string().min(1).max(100) });

export const agentRoutes = new Hono<{ Bindings: Env }>();

agentRoutes.get("/:project/agents", async (c) => {
  const project = projectIdSchema.safeParse(c.req.param("project"));
  if (!project.success) return jsonError(c, 400, zodMessage(project.error));
  const registered = await loadRegistered(c.env, project.data);
  if (!registered) return jsonError(c, 404, `project ${project.data} is not registered`);
  const [catalog, latest] = await Promise.all([
    readCatalog(registered),
    projectStub(c.env, project.data).latestAgentRuns(),
  ]);
  if ("error" in catalog) return jsonError(c, 502, catalog.error);
  const lastRuns = new Map(latest.map((run) => [run.agent, run]));
  return c.json({
    agents: catalog.agents.map((agent) => ({
      name: agent.name,
      source: agent.source,
      description: agent.description,
      schedule: agent.schedule ?? null,
      enabled: agent.enabled,
      lastRun: lastRuns.get(agent.name) ?? null,
    })),
    problems: catalog.problems,
  });
});

agentRoutes.post("/:project/agents/:name/runs", async (c) => {
  const path = agentPath.safeParse(c.req.param());
  if (!path.success) return jsonError(c, 400, zodMessage(path.error));
  const { project, name } = path.data;
  const registered = await loadRegistered(c.env, project);
  if (!registered) return jsonError(c, 404, `project ${project} is not registered`);
  const catalog = await readCatalog(registered);
  if ("error" in catalog) return jsonError(c, 502, catalog.error);
  const definition = catalog.agents.find((agent) => agent.name === name);
  if (!definition) {
    const problem = catalog.problems.find((p) => p.name === name);
    return problem
      ? jsonError(c, 409, `agent ${name} does not run: ${problem.error}`)
      : jsonError(c, 404, `no agent ${name} in project ${project}`);
  }
  if (!definition.enabled) return jsonError(c, 409, `agent ${name} is disabled`);
  const runId = await queueAgentRun(c.env, registered.project, definition, "manual");
  return c.json({ runId }, 202);
});

agentRoutes.get("/:project/agents/:name/runs/:id", async (c) => {
  const path = runPath.safeParse(c.req.param());
  if (!path.success) return jsonError(c, 400, zodMessage(path.error));
  const { project, name, id } = path.data;
  const run = await projectStub(c.env, project).agentRun(id);
  if (!run || run.agent !== name) return jsonError(c, 404, `no run ${id} of agent ${name}`);
  return c.json(run);
});

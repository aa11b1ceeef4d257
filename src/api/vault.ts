/**
 * Operator API for the vault: the items of a project, the pending ones across projects, and the operator's
 * approve / reject (decided by the project's Durable Object, audited as `operator`).
 */
import { Hono } from "hono";
import { z } from "zod";
import { OPERATOR, VAULT_ID, VAULT_STATES } from "../domain/vault.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import { projectIdSchema } from "../projects/config.ts";
import { loadProject } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { listVaultItems } from "../vault/queries.ts";
import { jsonError } from "./errors.ts";
import { jsonBody } from "./json-body.ts";
import { unregisteredReason } from "./operator-events.ts";

const itemPath = z.object({
  project: projectIdSchema,
  id: z.string().regex(VAULT_ID, "vault item ids look like v7"),
  decision: z.enum(["approve", "reject"]),
});
const decisionBody = z.object({ reason: z.string().min(1).max(500).optional() });
const stateQuery = z.object({ state: z.enum(VAULT_STATES).optional() });

export const vaultRoutes = new Hono<{ Bindings: Env }>();

vaultRoutes.get("/vault", async (c) => {
  return c.json({ items: await listVaultItems(c.env, { state: "pending" }) });
});

vaultRoutes.get("/projects/:project/vault", async (c) => {
  const project = projectIdSchema.safeParse(c.req.param("project"));
  if (!project.success) return jsonError(c, 400, zodMessage(project.error));
  const query = stateQuery.safeParse(c.req.query());
  if (!query.success) return jsonError(c, 400, zodMessage(query.error));
  if (!(await loadProject(c.env, project.data))) return jsonError(c, 404, unregisteredReason(project.data));
  return c.json({ items: await listVaultItems(c.env, { project: project.data, ...query.data }) });
});

vaultRoutes.post("/projects/:project/vault/:id/:decision", async (c) => {
  const path = itemPath.safeParse(c.req.param());
  if (!path.success) return jsonError(c, 400, zodMessage(path.error));
  const body = await jsonBody(c, decisionBody);
  if (!body.ok) return body.response;
  const { project, id, decision } = path.data;
  if (!(await loadProject(c.env, project))) return jsonError(c, 404, unregisteredReason(project));
  const result = await projectStub(c.env, project).vaultDecide(id, {
    decision,
    by: OPERATOR,
    ...(body.data.reason && { reason: body.data.reason }),
  });
  if ("error" in result) return jsonError(c, result.status, result.error);
  return c.json(result.item);
});

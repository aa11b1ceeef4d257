/** What waits for a human (`/dashboard/approvals`), the vault's items (`/dashboard/vault`), and the vault's form. */
import { Hono } from "hono";
import { z } from "zod";
import { OPERATOR, VAULT_ID, VAULT_STATES } from "../domain/vault.ts";
import { projectStub } from "../project-stub.ts";
import { projectIdSchema } from "../projects/config.ts";
import { zodMessage } from "../validation.ts";
import { listVaultItems } from "../vault/queries.ts";
import type { DashboardEnv } from "./context.ts";
import { vaultForm } from "./forms.ts";
import { csrfForm } from "./guard.ts";
import { Approvals } from "./pages/approvals.tsx";
import { VaultPage } from "./pages/vault.tsx";
import { approvalQueue } from "./queries.ts";
import { errorPage, renderPage, setFlash } from "./render.tsx";

export const vaultPages = new Hono<DashboardEnv>();

vaultPages.get("/approvals", async (c) => {
  const [queue, vault] = await Promise.all([
    approvalQueue(c.env),
    listVaultItems(c.env, { state: "pending" }),
  ]);
  const page = (
    <Approvals
      vault={vault}
      issues={queue.issues}
      total={queue.total}
      shown={queue.issues.length}
      csrf={c.get("csrf")}
      now={Date.now()}
    />
  );
  return renderPage(c, "Waiting for a human", page);
});

const vaultQuerySchema = z.object({
  project: projectIdSchema.optional(),
  state: z.enum(VAULT_STATES).optional(),
});

/** Every item of the vault, decided ones with their audit trail: of one project, or of all. */
vaultPages.get("/vault", async (c) => {
  const query = vaultQuerySchema.safeParse(c.req.query());
  if (!query.success) return errorPage(c, 400, zodMessage(query.error));
  const { project, state } = query.data;
  const items = await listVaultItems(c.env, { ...query.data, newest: true });
  const page = (
    <VaultPage items={items} project={project} state={state} csrf={c.get("csrf")} now={Date.now()} />
  );
  return renderPage(c, project ? `${project}: vault` : "Vault", page);
});

const vaultPathSchema = z.object({ project: projectIdSchema, id: z.string().regex(VAULT_ID) });

vaultPages.post("/projects/:project/vault/:id", async (c) => {
  const form = await csrfForm(c, vaultForm);
  if (!form.ok) return form.response;
  const path = vaultPathSchema.safeParse(c.req.param());
  if (!path.success) return errorPage(c, 400, zodMessage(path.error));
  const { project, id } = path.data;
  const { decision, reason, next } = form.data;
  // The operator decides, whoever signed in: audited as `operator`, like the API and the CLI.
  const result = await projectStub(c.env, project).vaultDecide(id, {
    decision,
    by: OPERATOR,
    ...(reason && { reason }),
  });
  setFlash(
    c,
    "error" in result
      ? `${decision} refused: ${result.error}`
      : `${project} ${id} is now ${result.item.state}`,
  );
  return c.redirect(next ?? "/dashboard/approvals", 303);
});

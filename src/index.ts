import { Hono } from "hono";
import { agentRoutes } from "./api/agents.ts";
import { alertRoutes } from "./api/alerts.ts";
import { operatorAuth } from "./api/auth.ts";
import { backfillRoutes } from "./api/backfill.ts";
import { costRoutes } from "./api/costs.ts";
import { jsonError } from "./api/errors.ts";
import { formulaRoutes } from "./api/formulas.ts";
import { healthRoutes } from "./api/health.ts";
import { issueRoutes } from "./api/issues.ts";
import { outcomeRoutes } from "./api/outcomes.ts";
import { projectSetupRoutes } from "./api/project-setup.ts";
import { projectRoutes } from "./api/projects.ts";
import { runnerAdminRoutes } from "./api/runners.ts";
import { statusRoutes } from "./api/status.ts";
import { vaultRoutes } from "./api/vault.ts";
import { armReconciliation } from "./cron/reconcile.ts";
import { pruneAll } from "./cron/retention.ts";
import { watchesAt, watchFactory } from "./cron/watchdog.ts";
import { dashboardRoutes } from "./dashboard/routes.tsx";
import type { Env } from "./env.ts";
import { errorMessage } from "./error-message.ts";
import { hookRoutes } from "./hooks/routes.ts";
import { log } from "./log.ts";
import { listProjects } from "./projects/store.ts";
import { runnerRoutes } from "./runner-api/routes.ts";

export { AlertDO, ForgePacerDO, IssueDO, ProjectDO } from "../durable-objects/index.ts";

export const app = new Hono<{ Bindings: Env }>();

app.get("/healthz", (c) => c.json({ ok: true }));
// Someone who opens the Worker's URL in a browser wants the dashboard (which asks them to sign in).
app.get("/", (c) => c.redirect("/dashboard"));
app.route("/hooks", hookRoutes);
app.route("/runner/v1", runnerRoutes);
app.use("/api/v1/*", operatorAuth);
app.route("/api/v1/projects", projectRoutes);
app.route("/api/v1/projects", issueRoutes);
app.route("/api/v1/projects", projectSetupRoutes);
app.route("/api/v1/projects", agentRoutes);
app.route("/api/v1/projects", formulaRoutes);
app.route("/api/v1/projects", healthRoutes);
app.route("/api/v1/projects", backfillRoutes);
app.route("/api/v1/runners", runnerAdminRoutes);
app.route("/api/v1", statusRoutes);
app.route("/api/v1", vaultRoutes);
app.route("/api/v1", costRoutes);
app.route("/api/v1", alertRoutes);
app.route("/api/v1", outcomeRoutes);
app.route("/dashboard", dashboardRoutes);

app.notFound((c) => jsonError(c, 404, `no route for ${c.req.method} ${new URL(c.req.url).pathname}`));
app.onError((error, c) => {
  log.error("unhandled error", { error: error.message, path: new URL(c.req.url).pathname });
  return jsonError(c, 500, "internal error");
});

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(
      armReconciliation(env).then((reports) => {
        for (const report of reports) {
          if (report.error) log.error("reconciliation not armed", report);
        }
      }),
    );
    ctx.waitUntil(
      listProjects(env)
        .then((projects) => pruneAll(env, projects))
        .catch((error) => log.error("retention failed", { error: errorMessage(error) })),
    );
    if (watchesAt(controller.scheduledTime)) {
      ctx.waitUntil(
        watchFactory(env, controller.scheduledTime).catch((error) =>
          log.error("watchdog failed", { error: errorMessage(error) }),
        ),
      );
    }
  },
} satisfies ExportedHandler<Env>;

/**
 * Operator API for outcomes (src/outcomes): `GET /projects/:project/outcomes` and, across projects,
 * `GET /outcomes`, each `?from&to` (UTC dates, default the last 30 days) as JSON, or one of its tables as CSV
 * (`?format=csv` or `Accept: text/csv`; `?table=days|waiting|causes`).
 */
import { type Context, Hono } from "hono";
import type { Env } from "../env.ts";
import { outcomesCsv } from "../outcomes/outcomes.ts";
import { outcomesReport, reportQuery } from "../outcomes/report.ts";
import { projectIdSchema } from "../projects/config.ts";
import { loadProject } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";
import { unregisteredReason } from "./operator-events.ts";

export const outcomeRoutes = new Hono<{ Bindings: Env }>();

async function answer(c: Context<{ Bindings: Env }>, project: string | null) {
  const query = reportQuery(c.req.query());
  if ("error" in query) return jsonError(c, 400, query.error);
  const report = await outcomesReport(c.env, project, query);
  if ("error" in report) return jsonError(c, 400, report.error);
  const csv = query.format === "csv" || (!query.format && c.req.header("accept")?.includes("text/csv"));
  if (!csv) return c.json(report);
  const table = query.table ?? "days";
  c.header("content-type", "text/csv; charset=utf-8");
  c.header(
    "content-disposition",
    `inline; filename="outcomes-${project ?? "all"}-${table}-${report.from}-${report.to}.csv"`,
  );
  return c.body(outcomesCsv(report, table));
}

outcomeRoutes.get("/outcomes", (c) => answer(c, null));

outcomeRoutes.get("/projects/:project/outcomes", async (c) => {
  const project = projectIdSchema.safeParse(c.req.param("project"));
  if (!project.success) return jsonError(c, 400, zodMessage(project.error));
  if (!(await loadProject(c.env, project.data))) return jsonError(c, 404, unregisteredReason(project.data));
  return answer(c, project.data);
});

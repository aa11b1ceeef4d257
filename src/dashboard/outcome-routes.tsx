/** `/dashboard/outcomes` and `/dashboard/projects/:project/outcomes` (src/outcomes), each with its `.csv`. */
import { Hono } from "hono";
import { outcomesCsv } from "../outcomes/outcomes.ts";
import { outcomesReport, reportQuery } from "../outcomes/report.ts";
import { projectIdSchema } from "../projects/config.ts";
import { listProjects, loadProject } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import type { DashboardContext, DashboardEnv } from "./context.ts";
import { OutcomesPage } from "./pages/outcomes.tsx";
import { errorPage, renderPage } from "./render.tsx";

export const outcomePages = new Hono<DashboardEnv>();

/** Outcomes over a window (`?from&to`): every project's, or one's; `.csv` gives a table of it. */
async function outcomesPage(c: DashboardContext, project: string | null, csv: boolean) {
  const query = reportQuery(c.req.query());
  if ("error" in query) return errorPage(c, 400, query.error);
  if (project && !(await loadProject(c.env, project)))
    return errorPage(c, 404, `project ${project} is not registered`);
  const [report, projects] = await Promise.all([
    outcomesReport(c.env, project, query),
    project ? [] : listProjects(c.env),
  ]);
  if ("error" in report) return errorPage(c, 400, report.error);
  if (csv) {
    c.header("content-type", "text/csv; charset=utf-8");
    return c.body(outcomesCsv(report, query.table ?? "days"));
  }
  const page = <OutcomesPage report={report} projects={projects.map((p) => p.id)} />;
  return renderPage(c, project ? `${project}: outcomes` : "Outcomes", page);
}

for (const csv of [false, true]) {
  const suffix = csv ? ".csv" : "";
  outcomePages.get(`/outcomes${suffix}`, (c) => outcomesPage(c, null, csv));
  outcomePages.get(`/projects/:project/outcomes${suffix}`, (c) => {
    const project = projectIdSchema.safeParse(c.req.param("project"));
    return project.success
      ? outcomesPage(c, project.data, csv)
      : errorPage(c, 400, zodMessage(project.error));
  });
}

/**
 * `/dashboard`: server-rendered pages over D1 (the board, an issue, runners, daily cost) and the forms that
 * send operator lifecycle events through the same path as the operator API; approvals and the vault in
 * ./vault-routes.tsx, outcomes in ./outcome-routes.tsx, alerts in ./alert-routes.tsx.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { AGENT_NAME } from "../agents/definition.ts";
import { readCatalog } from "../agents/runs.ts";
import { tokenMatches } from "../api/auth.ts";
import { deadLetterPathSchema, issuePathSchema } from "../api/issues.ts";
import { applyOperatorEvent } from "../api/operator-events.ts";
import { projectSummaries } from "../api/project-summaries.ts";
import { STATES } from "../domain/lifecycle.ts";
import { forgeLinks } from "../forge/web-links.ts";
import { issueStub } from "../issue-stub.ts";
import { projectStub } from "../project-stub.ts";
import { projectIdSchema } from "../projects/config.ts";
import { listProjects, loadProject, loadRegistered, type Project } from "../projects/store.ts";
import { listRunners, runnerIdSchema } from "../runner-api/registry.ts";
import { revokeRunner } from "../runner-api/revoke.ts";
import { zodMessage } from "../validation.ts";
import { listVaultItems } from "../vault/queries.ts";
import { actionLabel, eventFor } from "./actions.tsx";
import { alertPages } from "./alert-routes.tsx";
import { type DashboardEnv, SESSION_COOKIE } from "./context.ts";
import { actionForm, localPath, loginForm } from "./forms.ts";
import { csrfForm, requireOperator, sameOrigin } from "./guard.ts";
import { issuePath } from "./layout.tsx";
import { LIVE_SCRIPT } from "./live-script.ts";
import { outcomePages } from "./outcome-routes.tsx";
import { AgentRunsPage, Agents } from "./pages/agents.tsx";
import { Board, StateList } from "./pages/board.tsx";
import { HealthPage, type ProjectHealth } from "./pages/health.tsx";
import { IssuePage } from "./pages/issue.tsx";
import { LoginForm } from "./pages/login.tsx";
import { Overview } from "./pages/overview.tsx";
import { Runners } from "./pages/runners.tsx";
import { board, cursorSchema, dailyCost, issueRecords, statePage } from "./queries.ts";
import { clearCookie, errorPage, renderPage, setFlash, setSessionCookie } from "./render.tsx";
import { createSession, SESSION_TTL_MS } from "./session.ts";
import { STYLE } from "./style.ts";
import { vaultPages } from "./vault-routes.tsx";

const CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const securityHeaders: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  await next();
  // A WebSocket's 101 comes from the IssueDO as it is.
  if (c.res.status === 101) return;
  c.header("content-security-policy", CSP);
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "same-origin");
  if (!c.res.headers.has("cache-control")) c.header("cache-control", "no-store");
};

const stateParams = z.object({ project: projectIdSchema, state: z.enum(STATES) });
const agentParams = z.object({ project: projectIdSchema, name: z.string().regex(AGENT_NAME) });

export const dashboardRoutes = new Hono<DashboardEnv>();

dashboardRoutes.use("*", securityHeaders, sameOrigin);
dashboardRoutes.use(
  "*",
  bodyLimit({ maxSize: 64 * 1024, onError: (c) => errorPage(c, 413, "the form is larger than 64 KiB") }),
);

dashboardRoutes.get("/style.css", (c) => {
  c.header("content-type", "text/css; charset=utf-8");
  c.header("cache-control", "public, max-age=3600");
  return c.body(STYLE);
});

dashboardRoutes.get("/live.js", (c) => {
  c.header("content-type", "text/javascript; charset=utf-8");
  c.header("cache-control", "public, max-age=3600");
  return c.body(LIVE_SCRIPT);
});

dashboardRoutes.get("/login", (c) =>
  renderPage(c, "Sign in", <LoginForm next={localPath.safeParse(c.req.query("next")).data} />),
);

dashboardRoutes.post("/login", async (c) => {
  const adminToken = c.env.CONVEYOR_ADMIN_TOKEN;
  if (!adminToken) return errorPage(c, 503, "CONVEYOR_ADMIN_TOKEN is not configured");
  const form = loginForm.safeParse(await c.req.parseBody());
  if (!form.success)
    return renderPage(c, "Sign in", <LoginForm error={zodMessage(form.error)} />, { status: 400 });
  const { token, next } = form.data;
  if (!(await tokenMatches(token, adminToken))) {
    return renderPage(c, "Sign in", <LoginForm next={next} error="That is not the operator token." />, {
      status: 401,
    });
  }
  setSessionCookie(c, SESSION_COOKIE, await createSession(adminToken), SESSION_TTL_MS / 1000);
  return c.redirect(next ?? "/dashboard", 303);
});

dashboardRoutes.use("*", requireOperator);

dashboardRoutes.route("/", outcomePages);
dashboardRoutes.route("/", vaultPages);
dashboardRoutes.route("/", alertPages);

dashboardRoutes.post("/logout", async (c) => {
  const form = await csrfForm(c, z.object({}));
  if (!form.ok) return form.response;
  clearCookie(c, SESSION_COOKIE);
  return c.redirect("/dashboard/login", 303);
});

dashboardRoutes.get("/", async (c) => {
  const projects = await projectSummaries(c.env);
  const cost = await dailyCost(
    c.env,
    projects.map((p) => p.id),
  );
  return renderPage(c, "Projects", <Overview projects={projects} cost={cost} />);
});

dashboardRoutes.get("/projects/:project", async (c) => {
  const project = projectIdSchema.safeParse(c.req.param("project"));
  if (!project.success) return errorPage(c, 400, zodMessage(project.error));
  const [registered, columns] = await Promise.all([
    loadProject(c.env, project.data),
    board(c.env, project.data),
  ]);
  const page = (
    <Board project={project.data} repo={registered?.repo ?? null} columns={columns} now={Date.now()} />
  );
  return renderPage(c, project.data, page);
});

/** The supervisor's findings, every project's. */
dashboardRoutes.get("/health", async (c) => {
  const projects = await Promise.all((await listProjects(c.env)).map((p) => projectHealth(c.env, p)));
  return renderPage(c, "Health", <HealthPage projects={projects} now={Date.now()} />);
});

dashboardRoutes.get("/projects/:project/health", async (c) => {
  const project = projectIdSchema.safeParse(c.req.param("project"));
  if (!project.success) return errorPage(c, 400, zodMessage(project.error));
  const registered = await loadProject(c.env, project.data);
  if (!registered) return errorPage(c, 404, `project ${project.data} is not registered`);
  const health = await projectHealth(c.env, registered);
  return renderPage(c, `${project.data}: health`, <HealthPage projects={[health]} now={Date.now()} />);
});

async function projectHealth(env: DashboardEnv["Bindings"], project: Project): Promise<ProjectHealth> {
  const health = await projectStub(env, project.id).health();
  return { project: project.id, health, links: forgeLinks(project) };
}

dashboardRoutes.get("/projects/:project/agents", async (c) => {
  const project = projectIdSchema.safeParse(c.req.param("project"));
  if (!project.success) return errorPage(c, 400, zodMessage(project.error));
  const registered = await loadRegistered(c.env, project.data);
  if (!registered) return errorPage(c, 404, `project ${project.data} is not registered`);
  const [catalog, latest] = await Promise.all([
    readCatalog(registered),
    projectStub(c.env, project.data).latestAgentRuns(),
  ]);
  const lastRuns = new Map(latest.map((run) => [run.agent, run]));
  const read =
    "error" in catalog ? { agents: [], problems: [], error: catalog.error } : { ...catalog, error: null };
  const agents = read.agents.map((agent) => ({ ...agent, lastRun: lastRuns.get(agent.name) ?? null }));
  return renderPage(
    c,
    `${project.data}: agents`,
    <Agents
      project={project.data}
      agents={agents}
      problems={read.problems}
      error={read.error}
      now={Date.now()}
    />,
  );
});

dashboardRoutes.get("/projects/:project/agents/:name", async (c) => {
  const params = agentParams.safeParse(c.req.param());
  if (!params.success) return errorPage(c, 400, zodMessage(params.error));
  const { project, name } = params.data;
  const runs = await projectStub(c.env, project).recentAgentRuns(name);
  return renderPage(c, `${project}: ${name}`, <AgentRunsPage name={name} runs={runs} now={Date.now()} />);
});

dashboardRoutes.get("/projects/:project/states/:state", async (c) => {
  const params = stateParams.safeParse(c.req.param());
  if (!params.success) return errorPage(c, 400, zodMessage(params.error));
  const before = cursorSchema.optional().safeParse(c.req.query("before"));
  if (!before.success) return errorPage(c, 400, zodMessage(before.error));
  const { project, state } = params.data;
  const page = await statePage(c.env, project, state, before.data);
  return renderPage(
    c,
    `${project}: ${state.replace(/_/g, " ")}`,
    <StateList project={project} state={state} {...page} now={Date.now()} />,
  );
});

dashboardRoutes.get("/projects/:project/issues/:number", async (c) => {
  const path = issuePathSchema.safeParse(c.req.param());
  if (!path.success) return errorPage(c, 400, zodMessage(path.error));
  const { project, number } = path.data;
  const [view, records, registered, vault] = await Promise.all([
    issueStub(c.env, project, number).view(),
    issueRecords(c.env, project, number),
    loadProject(c.env, project),
    listVaultItems(c.env, { project, issue: number }),
  ]);
  if (!view) return errorPage(c, 404, `issue ${project}#${number} is not known to Conveyor`);
  const page = (
    <IssuePage
      view={view}
      records={records}
      csrf={c.get("csrf")}
      path={issuePath(project, number)}
      now={Date.now()}
      links={registered && forgeLinks(registered)}
      showRejected={c.req.query("events") === "all"}
      vault={vault}
    />
  );
  return renderPage(c, `${project}#${number}`, page, { live: `${issuePath(project, number)}/live` });
});

dashboardRoutes.get("/projects/:project/issues/:number/live", async (c) => {
  const path = issuePathSchema.safeParse(c.req.param());
  if (!path.success) return errorPage(c, 400, zodMessage(path.error));
  // An upgrade is a GET that carries the session cookie: only this dashboard's own pages may open one.
  if (c.req.header("origin") !== new URL(c.req.url).origin)
    return errorPage(c, 403, "cross-origin WebSocket refused");
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
    return errorPage(c, 426, "this path takes a WebSocket upgrade");
  const stub = issueStub(c.env, path.data.project, path.data.number);
  if (!(await stub.view()))
    return errorPage(c, 404, `issue ${path.data.project}#${path.data.number} is not known to Conveyor`);
  return stub.fetch(c.req.raw);
});

dashboardRoutes.get("/runners", async (c) =>
  renderPage(
    c,
    "Runners",
    <Runners runners={await listRunners(c.env)} now={Date.now()} csrf={c.get("csrf")} />,
  ),
);

dashboardRoutes.post("/runners/:id/revoke", async (c) => {
  const form = await csrfForm(c, z.object({}));
  if (!form.ok) return form.response;
  const id = runnerIdSchema.safeParse(c.req.param("id"));
  if (!id.success) return errorPage(c, 400, zodMessage(id.error));
  const revoked = await revokeRunner(c.env, id.data);
  setFlash(c, revoked ? `Revoked ${id.data}: its token no longer works` : `Runner ${id.data} is unknown`);
  return c.redirect("/dashboard/runners", 303);
});

dashboardRoutes.post("/projects/:project/issues/:number/dead-letters/:id/redeliver", async (c) => {
  const form = await csrfForm(c, z.object({}));
  if (!form.ok) return form.response;
  const path = deadLetterPathSchema.safeParse(c.req.param());
  if (!path.success) return errorPage(c, 400, zodMessage(path.error));
  const { project, number, id } = path.data;
  const result = await issueStub(c.env, project, number).redeliver(id);
  setFlash(
    c,
    result.ok
      ? `Sent again: ${result.kind} of ${project}#${number}`
      : `Not sent: ${project}#${number}: ${result.error}`,
  );
  return c.redirect(issuePath(project, number), 303);
});

dashboardRoutes.post("/projects/:project/issues/:number/actions", async (c) => {
  const form = await csrfForm(c, actionForm);
  if (!form.ok) return form.response;
  const path = issuePathSchema.safeParse(c.req.param());
  if (!path.success) return errorPage(c, 400, zodMessage(path.error));
  const { project, number } = path.data;
  const { action, key, next } = form.data;
  const by = `${c.get("principal").name} (dashboard)`.slice(0, 100);
  const result = await applyOperatorEvent(
    c.env,
    project,
    number,
    eventFor(action, by),
    `dashboard:${key}:${action}`,
  );
  const label = actionLabel(action);
  const issue = `${project}#${number}`;
  if (result.outcome === "invalid" || result.outcome === "unregistered")
    setFlash(c, `${label} refused: ${result.reason}`);
  else if (result.outcome === "rejected") setFlash(c, `${label} refused for ${issue}: ${result.reason}`);
  else if (result.outcome === "parked") setFlash(c, `${label} for ${issue} waits: ${result.reason}`);
  else if (result.duplicate) setFlash(c, `${label} for ${issue} was already sent; it is ${result.state}`);
  else setFlash(c, `${label}: ${issue} is now ${result.state.replace(/_/g, " ")}`);
  return c.redirect(next ?? issuePath(project, number), 303);
});

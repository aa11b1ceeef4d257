/**
 * `/runner/v1`: the runner API (wire contract in `contract.ts`). Every route but `register` needs the runner's
 * own token, unexpired; every job route also needs the job's current lease token, checked by the job's
 * ProjectDO.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { searchBacklog } from "../agents/backlog.ts";
import { bearerToken, missingBearer } from "../api/auth.ts";
import { jsonError } from "../api/errors.ts";
import { jsonBody } from "../api/json-body.ts";
import { claimScope } from "../domain/runner-tokens.ts";
import type { Env } from "../env.ts";
import { projectOfJob, projectStub } from "../project-stub.ts";
import { openBacklog } from "../projects/mirror.ts";
import { withActionSecrets } from "./action-secrets.ts";
import { backlogRequest } from "./backlog-contract.ts";
import { claimAcross } from "./claim.ts";
import {
  claimRequest,
  completeRequest,
  type DiskReport,
  eventsRequest,
  failRequest,
  fireRequest,
  type HostReport,
  heartbeatRequest,
  type Pressure,
  type RunnerEvent,
  registerRequest,
  TOKEN_ROTATE_HEADER,
} from "./contract.ts";
import { redact } from "./redact.ts";
import {
  type AuthenticatedRunner,
  authenticateRunner,
  markOffline,
  recordHealth,
  recordSandbox,
  registerRunner,
  rotateRunnerToken,
} from "./registry.ts";
import { reportJobs } from "./report.ts";
import { type ReportItem, reportRequest } from "./report-contract.ts";

type RunnerEnv = { Bindings: Env; Variables: { runner: AuthenticatedRunner & { token: string } } };

const runnerAuth: MiddlewareHandler<RunnerEnv> = async (c, next) => {
  const token = bearerToken(c);
  if (!token) return missingBearer(c);
  // Cloudflare's view of the caller: a token used from a new address is what a stolen one looks like.
  const runner = await authenticateRunner(c.env, token, c.req.header("cf-connecting-ip") ?? null);
  if ("error" in runner) return jsonError(c, 401, runner.error);
  c.set("runner", { ...runner, token });
  await next();
  if (runner.rotate) c.header(TOKEN_ROTATE_HEADER, "due");
};

export const runnerRoutes = new Hono<RunnerEnv>();

runnerRoutes.post("/register", async (c) => {
  const body = await jsonBody(c, registerRequest);
  if (!body.ok) return body.response;
  const registered = await registerRunner(c.env, body.data);
  if (!registered) return jsonError(c, 401, "registration token is unknown, used or expired");
  return c.json(registered, 201);
});

runnerRoutes.use("/rotate", runnerAuth);
runnerRoutes.use("/offline", runnerAuth);
runnerRoutes.use("/claim", runnerAuth);
runnerRoutes.use("/report", runnerAuth);
runnerRoutes.use("/jobs/*", runnerAuth);

runnerRoutes.post("/rotate", async (c) => c.json(await rotateRunnerToken(c.env, c.var.runner), 201));

// The runner stops (SIGTERM, `systemctl stop`): it shows offline at once, not once its silence is noticed.
runnerRoutes.post("/offline", async (c) => {
  await markOffline(c.env, c.var.runner.id);
  return c.body(null, 204);
});

runnerRoutes.post("/claim", async (c) => {
  const body = await jsonBody(c, claimRequest);
  if (!body.ok) return body.response;
  const { holding, projects, sandbox, waitMs, disk, host, pressure } = body.data;
  const runner = c.var.runner;
  if (sandbox && sandbox !== runner.sandbox) await recordSandbox(c.env, runner.id, sandbox);
  await recordHealth(c.env, runner, health({ disk, host, pressure }));
  // It holds back (runner/backpressure.ts): it said why, and is given nothing until it claims without.
  if (pressure) return c.body(null, 204);
  const scope = claimScope(runner.projects, projects);
  // The request's signal aborts when the runner hangs up (`enable_request_signal`): no lease for it then.
  const claim = await claimAcross(c.env, runner.id, holding, scope, waitMs, c.req.raw.signal);
  return claim ? c.json(await withActionSecrets(c.env, claim)) : c.body(null, 204);
});

// One call per runner per period: its leases renewed and its sessions' events, each job fenced alone.
runnerRoutes.post("/report", async (c) => {
  const body = await jsonBody(c, reportRequest);
  if (!body.ok) return body.response;
  const { jobs } = body.data;
  const answers = await reportJobs(c.env, c.var.runner.id, jobs);
  // Only under a current lease: a report whose every renewal was refused records nothing.
  if (answers.some((answer) => answer.ok && answer.lease))
    await recordHealth(c.env, c.var.runner, health(body.data));
  jobs.forEach((job, i) => {
    if (answers[i]?.ok) logRunnerLines(c, job.jobId, job.leaseToken, job.events);
  });
  return c.json({ jobs: answers });
});

// A job's heartbeat and events each on their own, as runners older than `report` send them.
runnerRoutes.post("/jobs/:id/heartbeat", async (c) => {
  const body = await jsonBody(c, heartbeatRequest);
  if (!body.ok) return body.response;
  const answer = await reportAlone(c, { leaseToken: body.data.leaseToken, heartbeat: true, events: [] });
  if (answer instanceof Response) return answer;
  await recordHealth(c.env, c.var.runner, health(body.data));
  return c.json(answer.lease);
});

runnerRoutes.post("/jobs/:id/events", async (c) => {
  const body = await jsonBody(c, eventsRequest);
  if (!body.ok) return body.response;
  const { leaseToken, events } = body.data;
  const answer = await reportAlone(c, { leaseToken, heartbeat: false, events });
  if (answer instanceof Response) return answer;
  logRunnerLines(c, answer.jobId, leaseToken, events);
  return c.body(null, 204);
});

runnerRoutes.post("/jobs/:id/fire", async (c) => {
  const body = await jsonBody(c, fireRequest);
  if (!body.ok) return body.response;
  const job = jobOf(c);
  if (job instanceof Response) return job;
  const { leaseToken, step } = body.data;
  const result = await job.stub.fireStep(job.id, c.var.runner.id, leaseToken, step);
  if (!result.ok) return jsonError(c, result.status, result.error);
  const { ok: _, ...answer } = result;
  return c.json(answer);
});

runnerRoutes.post("/jobs/:id/complete", async (c) => {
  const body = await jsonBody(c, completeRequest);
  if (!body.ok) return body.response;
  const job = jobOf(c);
  if (job instanceof Response) return job;
  const result = await job.stub.complete(job.id, c.var.runner.id, body.data);
  return result.ok ? c.body(null, 204) : jsonError(c, result.status, result.error);
});

runnerRoutes.post("/jobs/:id/fail", async (c) => {
  const body = await jsonBody(c, failRequest);
  if (!body.ok) return body.response;
  const job = jobOf(c);
  if (job instanceof Response) return job;
  const result = await job.stub.fail(job.id, c.var.runner.id, body.data);
  return result.ok ? c.body(null, 204) : jsonError(c, result.status, result.error);
});

// An agent run's read tool: the project's open backlog, paged, under the run's current lease.
runnerRoutes.post("/jobs/:id/backlog", async (c) => {
  const body = await jsonBody(c, backlogRequest);
  if (!body.ok) return body.response;
  const job = jobOf(c);
  if (job instanceof Response) return job;
  const lease = await job.stub.agentLease(job.id, c.var.runner.id, body.data.leaseToken);
  if (!lease.ok) return jsonError(c, lease.status, lease.error);
  const rows = await openBacklog(c.env, lease.project);
  return c.json(searchBacklog(rows, Date.now(), body.data.query));
});

/** The job's id and its ProjectDO (named by the id's prefix), or the 404 to answer. */
function jobOf(c: Context<RunnerEnv>) {
  const id = c.req.param("id") ?? "";
  const project = projectOfJob(id);
  if (!project) return jsonError(c, 404, `job ${id} is unknown`);
  return { id, stub: projectStub(c.env, project) };
}

/** The job of the route's `:id` reported on alone: its answer, or the refusal to answer instead. */
async function reportAlone(c: Context<RunnerEnv>, item: Omit<ReportItem, "jobId">) {
  const jobId = c.req.param("id") ?? "";
  const [answer] = await reportJobs(c.env, c.var.runner.id, [{ ...item, jobId }]);
  if (answer?.ok) return answer;
  return jsonError(c, answer?.status ?? 404, answer?.error ?? `job ${jobId} is unknown`);
}

/** What a claim, heartbeat or report says of the runner's host, for `recordHealth`. */
function health({ disk, host, pressure }: { disk?: DiskReport; host?: HostReport; pressure?: Pressure }) {
  return { ...(disk && { disk }), ...(host && { host }), ...(pressure && { pressure }) };
}

/** A job's `log` events, into the Worker's log with the secrets it knows of stripped. */
function logRunnerLines(
  c: Context<RunnerEnv>,
  jobId: string,
  leaseToken: string,
  events: readonly RunnerEvent[],
) {
  const secrets = [c.var.runner.token, leaseToken, c.env.CONVEYOR_ADMIN_TOKEN];
  for (const event of events) {
    if (event.kind !== "log") continue;
    const message = redact(event.message, secrets);
    console[event.level](JSON.stringify({ msg: "runner log", runner: c.var.runner.id, job: jobId, message }));
  }
}

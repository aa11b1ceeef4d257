/** Driving the job queue as runners do: registered runners calling `/runner/v1`, jobs from effects. */

import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import type { Deliverer } from "../../../durable-objects/issue/effects/deliverers.ts";
import { JOB_DELIVERERS } from "../../../durable-objects/issue/effects/jobs.ts";
import type { IssueSummary } from "../../../src/contracts/issue-object.ts";
import type { JobKind } from "../../../src/domain/lifecycle.ts";
import { issueStub } from "../../../src/issue-stub.ts";
import { projectStub } from "../../../src/project-stub.ts";
import { settingsSchema } from "../../../src/projects/config.ts";
import { type Claim, claimResponse, heartbeatResponse } from "../../../src/runner-api/contract.ts";
import { freshProject, OPERATOR } from "./webhooks.ts";

const BASE = "https://conveyor.test";

/** A registered project, straight into D1 (the registry route is not what these tests are about). */
export async function seedProject(id: string, settings: object = {}) {
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO projects (id, forge, api_url, repo, clone_url, default_branch, settings, secrets, created_at, updated_at)
     VALUES (?, 'forgejo', 'https://forge.invalid/api/v1', ?, ?, 'main', ?, 'sealed', ?, ?)`,
  )
    .bind(
      id,
      `acme/${id}`,
      `https://forge.invalid/acme/${id}.git`,
      JSON.stringify(settingsSchema.parse(settings)),
      now,
      now,
    )
    .run();
}

export async function seedForgeIssue(project: string, number: number, title: string, body: string) {
  await env.DB.prepare(
    `INSERT INTO forge_issues (project_id, number, title, body, state, labels, depends_on, updated_at)
     VALUES (?, ?, ?, ?, 'open', '[]', '[]', ?)`,
  )
    .bind(project, number, title, body, Date.now())
    .run();
}

export async function registrationToken(body: object = {}) {
  const res = await SELF.fetch(`${BASE}/api/v1/runners/tokens`, {
    method: "POST",
    headers: { ...OPERATOR, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`token: ${res.status} ${await res.text()}`);
  return (await res.json()) as { token: string; expiresAt: number };
}

export const register = (registrationToken: string, name = "build-1", extra: object = {}) =>
  SELF.fetch(`${BASE}/runner/v1/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ registrationToken, name, version: "0.1.0", ...extra }),
  });

export type Runner = { runnerId: string; token: string };

/** `projects` binds it through its registration token; `sandbox` is what it reports at registration. */
export async function newRunner(
  name = "build-1",
  options: { projects?: string[]; sandbox?: string } = {},
): Promise<Runner> {
  const { projects, sandbox } = options;
  const { token } = await registrationToken(projects ? { projects } : {});
  const res = await register(token, name, sandbox ? { sandbox } : {});
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return (await res.json()) as Runner;
}

export const call = (runner: Runner | null, path: string, body: unknown) =>
  SELF.fetch(`${BASE}/runner/v1/${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(runner && { authorization: `Bearer ${runner.token}` }),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

/** One claim; null for 204. */
export async function claim(
  runner: Runner,
  projects: string[],
  options: { waitMs?: number; holding?: string[] } = {},
): Promise<Claim | null> {
  const res = await call(runner, "claim", { waitMs: 0, ...options, projects });
  if (res.status === 204) return null;
  if (res.status !== 200) throw new Error(`claim: ${res.status} ${await res.text()}`);
  return claimResponse.parse(await res.json());
}

export async function heartbeat(runner: Runner, claimed: Claim) {
  const res = await call(runner, `jobs/${claimed.job.id}/heartbeat`, { leaseToken: claimed.leaseToken });
  if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${await res.text()}`);
  return heartbeatResponse.parse(await res.json());
}

export const complete = (runner: Runner, claimed: Claim, body: object) =>
  call(runner, `jobs/${claimed.job.id}/complete`, { leaseToken: claimed.leaseToken, ...body });

/** The issue as its IssueDO sees it, for effects delivered without going through one. */
export function issueView(project: string, number: number, patch: Partial<IssueSummary> = {}): IssueSummary {
  return {
    project,
    number,
    state: "revising",
    iteration: 2,
    branch: `conveyor/${number}`,
    sessionId: "sess-1",
    headSha: "abc1234",
    prOpened: true,
    prNumber: null,
    ciFixes: 1,
    criticRounds: 0,
    updates: 0,
    blockers: [],
    brief: null,
    summary: null,
    reason: null,
    vaultItem: null,
    ...patch,
  };
}

/** Delivers an `enqueue_job` effect as the IssueDO would, under `key`. */
export async function enqueue(view: IssueSummary, job: JobKind, key: string, detail?: string) {
  const deliver = JOB_DELIVERERS.enqueue_job as Deliverer<"enqueue_job">;
  await deliver(
    { kind: "enqueue_job", job, ...(detail && { detail }) },
    { env, key, issue: view, recheck: () => null },
  );
}

export async function cancelJobs(project: string, number: number) {
  const deliver = JOB_DELIVERERS.cancel_jobs as Deliverer<"cancel_jobs">;
  await deliver(
    { kind: "cancel_jobs" },
    {
      env,
      key: `cancel-${number}`,
      issue: issueView(project, number),
      recheck: () => null,
    },
  );
}

export const jobsOf = (project: string) => projectStub(env, project).jobs();

/** Lets time pass a job's lease (or grace period) and runs the ProjectDO's alarm, as the clock would. */
export async function pastDeadline(
  project: string,
  jobId: string,
  column: "lease_expires_at" | "affinity_until",
) {
  const stub = projectStub(env, project);
  await runInDurableObject(stub, (_instance, state) => {
    // 1, not 0: workerd refuses an alarm at time 0, which the object then arms for this deadline.
    state.storage.sql.exec(`UPDATE jobs SET ${column} = 1 WHERE id = ?`, jobId);
  });
  await runDurableObjectAlarm(stub);
}

/** A project with fresh runners; D1 and Durable Object storage are shared across tests. */
export async function setup(name: string, settings: object = {}, runners = 2) {
  const project = freshProject(name);
  await seedProject(project, settings);
  const all: Runner[] = [];
  for (let i = 0; i < runners; i++) all.push(await newRunner(`${name}-${i}`));
  return { project, runners: all };
}

/** The issue enters the backlog through its IssueDO, whose enqueue_job effect reaches the ProjectDO. */
export async function triaged(project: string, number: number) {
  const issue = issueStub(env, project, number);
  await issue.apply({
    id: `triage-${number}`,
    project,
    number,
    cause: { kind: "system", id: "test" },
    event: { type: "triage", blockers: [] },
  });
  await issue.drain();
  return issue;
}

/** Delivers the ProjectDO's outbox (issue events, D1 rows) now, as its alarm would. */
export const drain = (project: string) => projectStub(env, project).drain();

export const taken = (claimed: Claim | null) => {
  if (!claimed) throw new Error("expected a job");
  return claimed;
};

import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { issueStub } from "../../src/issue-stub.ts";
import { PATHS } from "../support/lifecycle-samples.ts";
import { registerProject } from "./support/webhooks.ts";

const TOKEN = env.CONVEYOR_ADMIN_TOKEN;
const auth = { authorization: `Bearer ${TOKEN}` };
const project = `api-${Date.now().toString(36)}`;
const base = `https://conveyor.test/api/v1/projects/${project}`;

// Operator events apply to registered projects only; reads of an unknown issue blame its project when it is not.
beforeAll(() => registerProject(project, "github", "acme/api"));

async function seed(number: number, state: keyof typeof PATHS) {
  const stub = issueStub(env, project, number);
  for (const [i, event] of PATHS[state].entries()) {
    await stub.apply({ id: `seed-${i}`, project, number, cause: { kind: "system", id: "seed" }, event });
  }
  await stub.drain();
}

describe("operator auth", () => {
  it.each([
    [{}, "missing bearer token"],
    [{ authorization: "Bearer wrong" }, "invalid operator token"],
    [{ authorization: `Basic ${TOKEN}` }, "missing bearer token"],
  ])("%j → 401", async (headers, error) => {
    const res = await SELF.fetch(`${base}/issues/1`, { headers });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error });
  });
});

describe("GET /api/v1/projects/:project/issues/:number", () => {
  it("404 with a one-line reason for an unknown issue", async () => {
    const res = await SELF.fetch(`${base}/issues/999`, { headers: auth });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: `issue ${project}#999 is not known to Conveyor` });
  });

  it("400 for a malformed number", async () => {
    const res = await SELF.fetch(`${base}/issues/abc`, { headers: auth });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^number: /);
  });

  it("returns state, iteration, branch, session and history", async () => {
    await seed(7, "awaiting_ci");
    const res = await SELF.fetch(`${base}/issues/7`, { headers: auth });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      project,
      number: 7,
      state: "awaiting_ci",
      iteration: 1,
      branch: "conveyor/7",
      sessionId: "sess-1",
    });
    expect((body.history as { to: string }[]).map((h) => h.to)).toEqual(["queued", "running", "awaiting_ci"]);
  });
});

describe("GET /api/v1/projects/:project/issues", () => {
  it("lists by state from D1, with paging", async () => {
    await seed(21, "blocked");
    await seed(22, "blocked");
    await seed(23, "queued");
    const res = await SELF.fetch(`${base}/issues?state=blocked&limit=1`, { headers: auth });
    const page = (await res.json()) as { issues: { number: number; state: string }[]; next: number | null };
    expect(page.issues.map((i) => [i.number, i.state])).toEqual([[21, "blocked"]]);
    expect(page.next).toBe(21);
    const rest = await SELF.fetch(`${base}/issues?state=blocked&after=21`, { headers: auth });
    expect(((await rest.json()) as typeof page).issues.map((i) => i.number)).toEqual([22]);
  });

  it("rejects an unknown state", async () => {
    const res = await SELF.fetch(`${base}/issues?state=sleeping`, { headers: auth });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^state: /);
  });
});

describe("POST /api/v1/projects/:project/issues/:number/events", () => {
  const post = (number: number, body: unknown) =>
    SELF.fetch(`${base}/issues/${number}/events`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  it("applies an operator event once per id", async () => {
    await seed(30, "escalated");
    const body = { id: "op-1", event: { type: "retry", by: "alice" } };
    const first = await post(30, body);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ outcome: "applied", state: "queued", duplicate: false });
    expect(await (await post(30, body)).json()).toMatchObject({ duplicate: true, state: "queued" });
    const view = (await (await SELF.fetch(`${base}/issues/30`, { headers: auth })).json()) as {
      history: { cause: { kind: string } }[];
    };
    expect(view.history.at(-1)?.cause).toEqual({ kind: "operator", id: "op-1" });
  });

  it("409 with the table's reason for an event that does not apply, and records it", async () => {
    await seed(31, "merged");
    const res = await post(31, { event: { type: "abandon", by: "alice" } });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      error: "abandon does not apply: the issue is merged",
      state: "merged",
    });
  });

  it.each([
    ["not json", "body must be JSON"],
    [{ event: { type: "explode" } }, /^event\.type: /],
    [{ event: { type: "ci", result: "green" } }, /^event\.headSha: /],
  ])("400 for %j", async (body, error) => {
    const res = await post(32, body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(error);
    expect((await SELF.fetch(`${base}/issues/32`, { headers: auth })).status).toBe(404);
  });
});

describe("an operator event for an unregistered project", () => {
  it("is a 404 with a one-line reason, and no issue comes to be", async () => {
    const stray = `${project}-unregistered`;
    const res = await SELF.fetch(`https://conveyor.test/api/v1/projects/${stray}/issues/1/events`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ event: { type: "triage", blockers: [] } }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: `project ${stray} is not registered (conveyor project add ${stray})`,
    });
    expect(await issueStub(env, stray, 1).view()).toBeNull();
    // Reads name the project too, not the issue.
    for (const path of ["issues/1", "issues"]) {
      const read = await SELF.fetch(`https://conveyor.test/api/v1/projects/${stray}/${path}`, {
        headers: auth,
      });
      expect(read.status).toBe(404);
      expect(await read.json()).toEqual({
        error: `project ${stray} is not registered (conveyor project add ${stray})`,
      });
    }
  });
});

it("sends GET / to the dashboard", async () => {
  const res = await SELF.fetch("https://conveyor.test/", { redirect: "manual" });
  expect(res.status).toBe(302);
  expect(res.headers.get("location")).toBe("/dashboard");
});

it("answers unknown routes with JSON 404", async () => {
  const res = await SELF.fetch("https://conveyor.test/nope");
  expect(res.status).toBe(404);
  expect(await res.json()).toEqual({ error: "no route for GET /nope" });
});

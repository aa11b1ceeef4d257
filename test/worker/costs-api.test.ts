/** `GET /api/v1/costs` and `GET /api/v1/projects/:project/costs`: spend per UTC day and per issue, from D1. */
import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { costReportSchema } from "../../src/usage/cost-report.ts";
import { freshProject, registerProject } from "./support/webhooks.ts";

const auth = { authorization: `Bearer ${env.CONVEYOR_ADMIN_TOKEN}` };
const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const isoDay = (at: number) => new Date(at).toISOString().slice(0, 10);
const project = freshProject("costs");
const other = freshProject("costs-other");

const get = async (path: string) => {
  const res = await SELF.fetch(`https://conveyor.test/api/v1${path}`, { headers: auth });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  await registerProject(project, "forgejo", "acme/costs");
  const spend = (id: string, p: string, number: number, usd: number, at: number) =>
    env.DB.prepare(
      `INSERT INTO usage (id, project_id, number, iteration, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, usd, turns, at) VALUES (?, ?, ?, 1, 100, 10, 0, 0, ?, 1, ?)`,
    ).bind(`${p}-${id}`, p, number, usd, at);
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO issues (project_id, number, state, iteration, seq, updated_at) VALUES (?, 4, 'merged', 1, 1, 0)",
    ).bind(project),
    env.DB.prepare(
      `INSERT INTO forge_issues (project_id, number, title, body, state, labels, depends_on, updated_at)
       VALUES (?, 4, 'Add slugify', '', 'closed', '[]', '[]', 0)`,
    ).bind(project),
    spend("a", project, 4, 1.25, today + 1000),
    spend("b", project, 4, 0.5, today - DAY / 2),
    spend("c", project, 9, 0.75, today - 2 * DAY),
    // The project's agent runs (number 0), and spend older than the window.
    spend("d", project, 0, 0.1, today + 2000),
    spend("e", project, 4, 9, today - 40 * DAY),
    // Another project, which is not registered any more.
    spend("f", other, 1, 2, today + 3000),
  ]);
});

describe("one project's costs", () => {
  it("per day over the window (every day, oldest first) and per issue, most first, with state and title", async () => {
    const { status, body } = await get(`/projects/${project}/costs?days=7`);
    expect(status).toBe(200);
    const report = costReportSchema.parse(body);
    expect(report.project).toBe(project);
    expect(report.from).toBe(today - 6 * DAY);
    expect(report.totalUsd).toBeCloseTo(2.6);
    expect(report.days).toHaveLength(7);
    expect(report.days.filter((d) => d.usd > 0)).toEqual([
      { day: isoDay(today - 2 * DAY), usd: 0.75 },
      { day: isoDay(today - DAY), usd: 0.5 },
      { day: isoDay(today), usd: expect.closeTo(1.35) },
    ]);
    expect(report.issues).toEqual([
      { project, number: 4, usd: 1.75, state: "merged", title: "Add slugify" },
      { project, number: 9, usd: 0.75, state: null, title: null },
      { project, number: 0, usd: 0.1, state: null, title: null },
    ]);
    const top = costReportSchema.parse((await get(`/projects/${project}/costs?days=60&limit=1`)).body);
    expect(top.issues).toEqual([expect.objectContaining({ number: 4, usd: 10.75 })]);
  });

  it("of a project no longer registered, from its spend; 404 for one Conveyor never knew; 400 for a bad window", async () => {
    expect(costReportSchema.parse((await get(`/projects/${other}/costs`)).body).totalUsd).toBe(2);
    expect(await get("/projects/never-known/costs")).toEqual({
      status: 404,
      body: { error: "project never-known is not registered (conveyor project add never-known)" },
    });
    const bad = await get(`/projects/${project}/costs?days=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^days: /);
  });
});

it("every project's costs", async () => {
  const report = costReportSchema.parse((await get("/costs?days=1&limit=500")).body);
  expect(report.project).toBeNull();
  expect(report.issues).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ project, number: 4, usd: 1.25 }),
      expect.objectContaining({ project: other, number: 1, usd: 2 }),
    ]),
  );
});

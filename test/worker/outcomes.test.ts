/**
 * The outcomes report from a seeded D1 history with known answers: issues merged, label → merged time,
 * first-pass CI, rounds, escalations and their causes, cost, the cache-hit ratio and the time per state; as
 * JSON and CSV from the API, of one project and of all.
 */
import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ESCALATED_THEN_ABANDONED,
  issueHistory,
  MERGED_AFTER_RED_CI,
  MERGED_FIRST_PASS,
  usageRow,
} from "../support/outcome-history.ts";
import { page, sessionCookie } from "./dashboard-support.ts";
import { freshProject, OPERATOR, registerProject } from "./support/webhooks.ts";

const HOUR = 3_600_000;
const DAY1 = Date.parse("2026-11-01T00:00:00Z");
const DAY2 = DAY1 + 24 * HOUR;
const project = freshProject("outcomes");

function insert(table: string, rows: Record<string, unknown>[]) {
  return rows.map((row) => {
    const columns = Object.keys(row);
    return env.DB.prepare(
      `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
    ).bind(...Object.values(row));
  });
}

beforeAll(async () => {
  await registerProject(project, "forgejo", "acme/outcomes");
  const histories = [
    issueHistory(project, 1, DAY1, MERGED_FIRST_PASS),
    issueHistory(project, 2, DAY1, MERGED_AFTER_RED_CI),
    issueHistory(project, 3, DAY2, ESCALATED_THEN_ABANDONED),
    // Queued the day before the window, and still waiting: it spends the whole window queued.
    issueHistory(project, 4, DAY1 - 12 * HOUR, [["triage", "queued", 0]]),
  ];
  await env.DB.batch([
    ...insert(
      "transitions",
      histories.flatMap((h) => h.transitions),
    ),
    ...insert(
      "issues",
      histories.map((h) => h.issue),
    ),
    ...insert("usage", [
      usageRow(project, 1, 1, DAY1 + 2 * HOUR),
      usageRow(project, 2, 3, DAY1 + 2 * HOUR, 2_000),
      usageRow(project, 3, 0.5, DAY2 + 2 * HOUR),
      // Before the window: in issue 2's cost per merged issue, not in the window's spend.
      usageRow(project, 2, 2, DAY1 - HOUR),
    ]),
  ]);
});

const get = (path: string, headers: Record<string, string> = {}) =>
  SELF.fetch(`https://conveyor.test/api/v1${path}`, { headers: { ...OPERATOR, ...headers } });

const WINDOW = "from=2026-11-01&to=2026-11-02";

describe("outcomes", () => {
  it("of a project over a window, day by day and in all", async () => {
    const res = await get(`/projects/${project}/outcomes?${WINDOW}`);
    expect(res.status).toBe(200);
    const report = (await res.json()) as Record<string, unknown> & { days: Record<string, unknown>[] };
    expect(report).toMatchObject({ project, from: "2026-11-01", to: "2026-11-02" });
    expect(report.totals).toEqual({
      merged: 2,
      finished: 3,
      leadTimeP50Ms: 5 * HOUR,
      leadTimeP90Ms: 10 * HOUR,
      firstPassCiRate: 0.5,
      criticRoundsPerIssue: 1,
      humanRoundsPerIssue: 0.5,
      escalations: 1,
      escalationRate: 1 / 3,
      costUsd: 4.5,
      costPerMergedUsd: 3,
      // 2 000 read of 3 × 1 000 input + 2 000 read + 3 × 1 000 written.
      cacheHitRatio: 0.25,
    });
    expect(report.days.map((d) => [d.day, d.merged, d.finished, d.escalations, d.costUsd])).toEqual([
      ["2026-11-01", 2, 2, 0, 4],
      ["2026-11-02", 0, 1, 1, 0.5],
    ]);
    expect(report.days[1]).toMatchObject({ escalationRate: 1, leadTimeP50Ms: null, costPerMergedUsd: null });
    expect(report.escalationCauses).toEqual([
      {
        cause: "phase",
        label: "the session stopped: it asked, failed, or finished without a change",
        count: 1,
      },
    ]);
    // Where the factory waited: every issue's hours per state within the window, #4 queued all 48 of them.
    expect(report.waiting).toEqual([
      { state: "queued", ms: 51 * HOUR },
      { state: "escalated", ms: 4 * HOUR },
      { state: "awaiting_ci", ms: 3 * HOUR },
      { state: "running", ms: 3 * HOUR },
      { state: "awaiting_approval", ms: 2 * HOUR },
      { state: "awaiting_review", ms: 2 * HOUR },
      { state: "merging", ms: 2 * HOUR },
      { state: "revising", ms: 2 * HOUR },
    ]);
  });

  it("as CSV: the days, or the time per state", async () => {
    const days = await get(`/projects/${project}/outcomes?${WINDOW}`, { accept: "text/csv" });
    expect(days.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const lines = (await days.text()).trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "day,merged,finished,leadTimeP50Ms,leadTimeP90Ms,firstPassCiRate,criticRoundsPerIssue,humanRoundsPerIssue,escalations,escalationRate,costUsd,costPerMergedUsd,cacheHitRatio",
    );
    expect(lines[1]).toBe(`2026-11-01,2,2,${5 * HOUR},${10 * HOUR},0.5,1,0.5,0,0,4,3,${1 / 3}`);
    expect(lines).toHaveLength(3);
    const waiting = await get(`/projects/${project}/outcomes?${WINDOW}&format=csv&table=waiting`);
    expect((await waiting.text()).split("\r\n").slice(0, 2)).toEqual(["state,ms", `queued,${51 * HOUR}`]);
  });

  it("across projects, this one's merges among them", async () => {
    const res = await get(`/outcomes?${WINDOW}`);
    const report = (await res.json()) as { project: null; totals: { merged: number } };
    expect(report.project).toBeNull();
    expect(report.totals.merged).toBeGreaterThanOrEqual(2);
  });

  it("the last 30 days by default; a bad window or an unknown project is refused with the reason", async () => {
    const report = (await (await get(`/projects/${project}/outcomes`)).json()) as { days: unknown[] };
    expect(report.days).toHaveLength(30);
    const refusals = [
      [`/projects/${project}/outcomes?from=2026-11-03&to=2026-11-01`, 400, /from \(2026-11-03\) is after to/],
      [`/projects/${project}/outcomes?from=2025-01-01&to=2026-11-01`, 400, /at most 366 days/],
      [`/projects/${project}/outcomes?from=yesterday`, 400, /^from: a date is YYYY-MM-DD/],
      [`/projects/${project}/outcomes?form=2026-11-01`, 400, /form/],
      ["/projects/nobody-here/outcomes", 404, /not registered/],
    ] as const;
    for (const [path, status, error] of refusals) {
      const res = await get(path);
      expect([path, res.status]).toEqual([path, status]);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
    }
  });

  it("on the dashboard: the figures, a plot per measure, and the CSV of the same window", async () => {
    const cookie = await sessionCookie();
    const res = await page(`/dashboard/projects/${project}/outcomes?${WINDOW}`, cookie);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("<dt>label → merged</dt><dd>p50 5 h 00 min · p90 10 h 00 min</dd>");
    const plots = [...html.matchAll(/<svg viewBox="0 0 640 170" role="img" aria-label="([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(plots).toHaveLength(10);
    expect(plots[0]).toBe("Issues merged per day");
    const csv = await page(`/dashboard/projects/${project}/outcomes.csv?${WINDOW}&table=causes`, cookie);
    expect(await csv.text()).toMatch(/^cause,label,count\r\nphase,/);
    expect((await page(`/dashboard/projects/${project}/outcomes?to=soon`, cookie)).status).toBe(400);
  });
});

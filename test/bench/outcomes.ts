/**
 * Outcomes over 100 000 edges: 10 000 issues of one project, each ten edges (CI red, fixed, held for a
 * human, merged) spread over the last 30 days, seeded straight into the local D1 before the Worker starts.
 * The report of the default window (all of them) from the operator API, JSON and CSV, and its dashboard page
 * with every plot; across projects too.
 */
import { rm } from "node:fs/promises";
import { historyInserts, issueHistory, MERGED_AFTER_RED_CI, usageRow } from "../support/outcome-history.ts";
import { insertRows, writeSeed } from "../support/seed-sql.ts";
import { startLocalWorker, TEST_ADMIN_TOKEN } from "../support/worker.ts";
import { dashboardCookie } from "./dashboard.ts";
import { emit, load, percentile } from "./load.ts";

const PROJECT = "bench-outcomes";
const ISSUES = 10_000;
const DAY_MS = 86_400_000;

function seedStatements(now: number): string[] {
  // From the window's first day to half a day ago: every issue (11 h from label to merge) merges inside it.
  const first = (Math.floor(now / DAY_MS) - 29) * DAY_MS;
  const span = now - DAY_MS / 2 - 11 * 3_600_000 - first;
  const histories = Array.from({ length: ISSUES }, (_, i) =>
    issueHistory(PROJECT, i + 1, first + Math.floor((i / ISSUES) * span), MERGED_AFTER_RED_CI),
  );
  const edges = histories.flatMap((h) => h.transitions);
  if (edges.length !== 100_000) throw new Error(`seeded ${edges.length} edges, not 100 000`);
  return [
    ...historyInserts(histories),
    ...insertRows(
      "usage",
      histories.map((h, i) => usageRow(PROJECT, i + 1, 0.4, Number(h.transitions[2]?.at), 20_000)),
    ),
  ];
}

export async function benchOutcomes({ requests = 50 } = {}) {
  const seedSql = await writeSeed("bench-outcomes", seedStatements(Date.now()));
  const worker = await startLocalWorker({ seedSql });
  await rm(seedSql);
  try {
    const operator = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const registered = await fetch(`${worker.url}/api/v1/projects/${PROJECT}`, {
      method: "PUT",
      headers: { ...operator, "content-type": "application/json" },
      body: JSON.stringify({
        forge: "forgejo",
        apiUrl: "http://127.0.0.1:9/api/v1",
        repo: "acme/bench",
        webhookSecret: "bench outcomes webhook secret",
        forgeToken: "bench-outcomes-forge-token",
      }),
    });
    if (!registered.ok) throw new Error(`register: ${registered.status}`);
    const cookie = await dashboardCookie(worker.url);
    const report = (await (
      await fetch(`${worker.url}/api/v1/projects/${PROJECT}/outcomes`, { headers: operator })
    ).json()) as { totals: { merged: number } };
    if (report.totals.merged !== ISSUES)
      throw new Error(`the report counts ${report.totals.merged} merges, not ${ISSUES}`);
    const get = (path: string, headers: Record<string, string>) => async () => {
      const res = await fetch(`${worker.url}${path}`, { headers });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 200)}`);
    };
    const figures: [string, string, Record<string, string>][] = [
      ["outcomes_api_100k_edges", `/api/v1/projects/${PROJECT}/outcomes`, operator],
      ["outcomes_csv_100k_edges", `/api/v1/projects/${PROJECT}/outcomes?format=csv`, operator],
      ["outcomes_page_100k_edges", `/dashboard/projects/${PROJECT}/outcomes`, { cookie }],
      ["outcomes_all_projects_100k_edges", "/api/v1/outcomes", operator],
    ];
    for (const [name, path, headers] of figures) {
      await load(5, 1, get(path, headers));
      const run = await load(requests, 1, get(path, headers));
      emit({ name: `${name}_p50`, value: percentile(run.latenciesMs, 50), unit: "ms" });
      emit({ name: `${name}_p99`, value: percentile(run.latenciesMs, 99), unit: "ms", target: "< 300" });
    }
  } finally {
    await worker.stop();
  }
}

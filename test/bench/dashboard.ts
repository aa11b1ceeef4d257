/**
 * The dashboard with 10 000 issues in one project, seeded straight into the local D1 before the Worker
 * starts: the board, a state page deep into its keyset paging, the overview with its cost charts, and the
 * approval queue, each fetched as a signed-in browser would.
 */
import { rm } from "node:fs/promises";
import { insertRows, issueRows, writeSeed } from "../support/seed-sql.ts";
import { startLocalWorker, TEST_ADMIN_TOKEN } from "../support/worker.ts";
import { emit, load, percentile } from "./load.ts";

const PROJECT = "bench-board";
const DAY_MS = 86_400_000;
/** How 10 000 issues of a busy project spread over the states. */
const SPREAD: [string, number][] = [
  ["merged", 6000],
  ["abandoned", 1000],
  ["queued", 1500],
  ["blocked", 500],
  ["running", 100],
  ["awaiting_ci", 200],
  ["awaiting_review", 200],
  ["revising", 100],
  ["awaiting_approval", 200],
  ["escalated", 200],
];

function seedStatements(now: number): string[] {
  const states = SPREAD.flatMap(([state, n]) => Array.from({ length: n }, () => state));
  const rows = states.map((state, i) =>
    issueRows(PROJECT, i + 1, state, now - i * 60_000, `Benchmark issue ${i + 1}`),
  );
  const usage = states.map((_, i) => ({
    id: `bench-${i}`,
    project_id: PROJECT,
    number: i + 1,
    iteration: 1,
    input_tokens: 2_000,
    output_tokens: 1_000,
    cache_read_tokens: 20_000,
    cache_write_tokens: 3_000,
    usd: 0.2,
    turns: 10,
    at: now - (i % 30) * DAY_MS,
  }));
  return [
    ...insertRows(
      "issues",
      rows.map((r) => r.issue),
    ),
    ...insertRows(
      "forge_issues",
      rows.map((r) => r.forge),
    ),
    ...insertRows("usage", usage),
  ];
}

/** Signs in as a browser would: the session cookie (`name=value`). */
export async function dashboardCookie(workerUrl: string): Promise<string> {
  const login = await fetch(`${workerUrl}/dashboard/login`, {
    method: "POST",
    headers: { origin: workerUrl, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: TEST_ADMIN_TOKEN }),
    redirect: "manual",
  });
  const cookie = login.headers.get("set-cookie")?.split(";")[0];
  if (login.status !== 303 || !cookie) throw new Error(`login: ${login.status}`);
  return cookie;
}

export async function benchDashboard({ requests = 100 } = {}) {
  const seedSql = await writeSeed("bench-dashboard", seedStatements(Date.now()));
  const worker = await startLocalWorker({ seedSql });
  await rm(seedSql);
  try {
    const cookie = await dashboardCookie(worker.url);
    const get = (path: string) => async () => {
      const res = await fetch(`${worker.url}${path}`, { headers: { cookie } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 200)}`);
    };
    const board = await (
      await fetch(`${worker.url}/dashboard/projects/${PROJECT}`, { headers: { cookie } })
    ).text();
    if (!board.includes("· 10000 issues"))
      throw new Error("the board does not show the 10 000 seeded issues");
    // Page 20 of the 1500 queued issues, by the cursor the page before it links to.
    const deep = `${Date.now() - 7000 * 60_000}.7000`;
    const pages: [string, string, string | undefined][] = [
      ["dashboard_board_10k", `/dashboard/projects/${PROJECT}`, "< 300"],
      ["dashboard_state_page_10k", `/dashboard/projects/${PROJECT}/states/queued?before=${deep}`, "< 300"],
      ["dashboard_overview_10k", "/dashboard", "< 300"],
      ["dashboard_approvals_10k", "/dashboard/approvals", "< 300"],
    ];
    for (const [name, path, target] of pages) {
      await load(10, 1, get(path));
      const run = await load(requests, 1, get(path));
      emit({ name: `${name}_p50`, value: percentile(run.latenciesMs, 50), unit: "ms" });
      emit({ name: `${name}_p99`, value: percentile(run.latenciesMs, 99), unit: "ms", target });
    }
  } finally {
    await worker.stop();
  }
}

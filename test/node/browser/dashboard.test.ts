/**
 * The dashboard in a real browser: Chromium (Debian's /usr/bin/chromium) driven by playwright-core against the
 * local Worker with seeded data. Signs in, opens an issue, approves a held merge, watches an issue and a real
 * runner's scripted session live (its jobs, usage and outbox too), sees that runner offline once stopped,
 * follows the forge links, reads health times, critic rounds and a red CI row, decides an action's steps in
 * the vault (with a local forge holding the formula), reads the outcomes of a seeded history, and follows a
 * silent runner's alert from open to resolved.
 * Screenshots: test-output/.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Script } from "../../../runner/drivers/scripted.ts";
import { killLeftoverSessions } from "../../../runner/leftovers.ts";
import { createForgeClient } from "../../../src/forge/client/index.ts";
import { MAX_HEARTBEAT_INTERVAL_MS } from "../../../src/runner-api/contract.ts";
import { type LocalForge, startLocalForge } from "../../support/forge/index.ts";
import { HEAD, PATHS } from "../../support/lifecycle-samples.ts";
import {
  ESCALATED_THEN_ABANDONED,
  historyInserts,
  issueHistory,
  MERGED_AFTER_RED_CI,
  MERGED_FIRST_PASS,
  usageRow,
} from "../../support/outcome-history.ts";
import { ROTATE_TOKEN_MD } from "../../support/rotate-token.ts";
import { insertRows, issueRows, writeSeed } from "../../support/seed-sql.ts";
import { type LocalWorker, startLocalWorker, TEST_ADMIN_TOKEN } from "../../support/worker.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../git/support.ts";
import { Operator, writeRunnerConfig } from "../runner/support/operator.ts";
import { type RunnerProcess, startRunner } from "../runner/support/runner-process.ts";

const CHROMIUM = "/usr/bin/chromium";
const OUTPUT = new URL("../../../test-output/", import.meta.url).pathname;
const PROJECT = "web";
const HELD = 7;
const DAY = 86_400_000;
/** How long before the seeding the seeded runner was last heard of. */
const SILENT_MS = 5 * 60_000;
/** The project a real runner works on, from a local git upstream. */
const LIVE = "live";
const GIT_TOKEN = "git-token-browser-31";
const RUNNER_NAME = "browser-live-runner";
/** A project whose seeded history the outcomes pages plot. */
const HISTORY = "hist";
/** A project on the local forge, whose formula's dangerous step waits in the vault. */
const OPS = "ops";
/** A project whose supervisor counts a runner silent for a minute as offline: its seeded runner alerts. */
const ALERTING = "alerting";
/** Its runner, bound to it alone, silent since the seeding; revocable (a runner id the API takes). */
const SILENT_RUNNER = "runner-00000000000000b2";
/**
 * A session that writes a file, runs a command, thinks a moment, and pushes for CI: the test watches all of
 * it on the issue's page, its job and usage included, without a reload.
 */
const SCRIPT: Script = {
  implement: [
    { write: "notes/live.txt", content: "seen from the browser\n" },
    { run: "wc -l notes/live.txt" },
    { sleep: 5_000 },
    { phase: "awaiting_ci" },
  ],
};

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`skipping the browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

async function seedSql(now: number): Promise<string> {
  const states = ["queued", "running", "awaiting_ci", "awaiting_review", "revising", "escalated", "merged"];
  const board = Array.from({ length: 42 }, (_, i) =>
    issueRows(
      PROJECT,
      100 + i,
      states[i % states.length] ?? "queued",
      now - i * 60_000,
      `Seeded issue ${100 + i}`,
    ),
  );
  const held = issueRows(PROJECT, HELD, "new", now, "Pin the CI image to a digest");
  const usage = [
    [1, 12_000, 3_000, 0, 18_000, 0.42],
    [2, 1_500, 2_200, 26_000, 1_200, 0.11],
    [3, 900, 1_400, 29_000, 600, 0.07],
  ].map(([iteration, input, output, read, write, usd]) => ({
    id: `u-${iteration}`,
    project_id: PROJECT,
    number: HELD,
    iteration: iteration ?? 0,
    input_tokens: input ?? 0,
    output_tokens: output ?? 0,
    cache_read_tokens: read ?? 0,
    cache_write_tokens: write ?? 0,
    usd: usd ?? 0,
    turns: 12,
    at: now - (3 - (iteration ?? 0)) * DAY,
  }));
  const daily = Array.from({ length: 14 }, (_, i) => ({
    ...usage[0],
    id: `d-${i}`,
    number: 100 + i,
    usd: 0.5 + (i % 5) * 0.6,
    at: now - i * DAY,
  }));
  return writeSeed("browser", [
    ...insertRows("issues", [...board.map((b) => b.issue)]),
    ...insertRows(
      "forge_issues",
      [...board, held].map((b) => b.forge),
    ),
    ...insertRows("usage", [...usage, ...daily]),
    ...insertRows("jobs", [
      {
        id: "web.7.a",
        project_id: PROJECT,
        number: HELD,
        kind: "implement",
        status: "done",
        attempt: 1,
        runner_id: "runner-1",
        created_at: now - 3 * DAY,
        updated_at: now - 3 * DAY,
      },
      {
        id: "web.7.b",
        project_id: PROJECT,
        number: HELD,
        kind: "revise",
        status: "done",
        attempt: 1,
        runner_id: "runner-1",
        created_at: now - 2 * DAY,
        updated_at: now - 2 * DAY,
      },
      {
        id: "web.101.a",
        project_id: PROJECT,
        number: 101,
        kind: "implement",
        status: "leased",
        attempt: 1,
        runner_id: "runner-1",
        created_at: now,
        updated_at: now,
      },
    ]),
    ...insertRows("runners", [
      {
        id: "runner-1",
        name: "build-host-a",
        token_hash: "seeded",
        version: "0.1.0",
        projects: null,
        created_at: now - 5 * DAY,
        // Its host went down five minutes ago, holding a job: silent for longer than a claim's wait.
        last_seen_at: now - SILENT_MS,
      },
      {
        id: SILENT_RUNNER,
        name: "build-host-b",
        token_hash: "seeded-2",
        version: "0.1.0",
        projects: JSON.stringify([ALERTING]),
        created_at: now - 5 * DAY,
        last_seen_at: now - SILENT_MS,
      },
    ]),
    ...insertRows("critic_reports", [
      {
        id: "r-1",
        project_id: PROJECT,
        number: HELD,
        round: 1,
        head_sha: "abc0001",
        verdict: "REQUEST_CHANGES",
        summary: "Pin it by digest, not by tag.",
        findings: JSON.stringify([
          { severity: "major", file: ".woodpecker.yml", line: 2, comment: "use the digest", inScope: true },
        ]),
        at: now - 2 * DAY,
      },
      {
        id: "r-2",
        project_id: PROJECT,
        number: HELD,
        round: 2,
        head_sha: "abc1234",
        verdict: "APPROVE",
        summary: "Pins the image; the workflow change needs a human.",
        findings: JSON.stringify([
          { severity: "nit", file: ".woodpecker.yml", line: 4, comment: "add a comment", inScope: true },
        ]),
        at: now - DAY,
      },
    ]),
    ...historyRows(now),
  ]);
}

/**
 * Ten days of a project's history: three issues a day, two merged (one CI-green at once), one escalated. Each
 * day's issues start at 01:00 UTC, so that its merges (hours later) fall on the same day whatever the time now.
 */
function historyRows(now: number): string[] {
  const today = Math.floor(now / DAY) * DAY;
  const histories = Array.from({ length: 30 }, (_, i) => {
    const start = today - (10 - Math.floor(i / 3)) * DAY + DAY / 24;
    const path = [MERGED_FIRST_PASS, MERGED_AFTER_RED_CI, ESCALATED_THEN_ABANDONED][i % 3] ?? [];
    return issueHistory(HISTORY, i + 1, start, path);
  });
  return [
    ...historyInserts(histories),
    ...insertRows(
      "usage",
      histories.map((h, i) =>
        usageRow(HISTORY, i + 1, 0.25 + (i % 4) * 0.1, Number(h.transitions[1]?.at), i * 500),
      ),
    ),
  ];
}

describe.skipIf(!haveChromium)("dashboard in Chromium", () => {
  let worker: LocalWorker;
  let context: BrowserContext;
  let profile = "";
  let page: Page;
  let operator: Operator;
  let root = "";
  let gitServer: GitHttpServer;
  let runner: RunnerProcess | undefined;
  let forge: LocalForge;
  let forgeData = "";
  /** When the data was seeded: its times are relative to it. */
  let seededAt = 0;

  beforeAll(async () => {
    const now = Date.now();
    seededAt = now;
    profile = await mkdtemp(join(tmpdir(), "conveyor-chromium-"));
    root = await tempDir("browser-runner");
    forgeData = await tempDir("browser-forge");
    await mkdir(OUTPUT, { recursive: true });
    [worker, context, gitServer, forge] = await Promise.all([
      seedSql(now).then(async (seedFile) => {
        const started = await startLocalWorker({ seedSql: seedFile });
        await rm(seedFile);
        return started;
      }),
      chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
        ],
        viewport: { width: 1400, height: 900 },
      }),
      Upstream.create(root).then(() => startGitHttpServer(root, "conveyor-bot", GIT_TOKEN)),
      startLocalForge({ dataDir: forgeData, ci: { enabled: false } }),
    ]);
    operator = new Operator(worker.url);
    // Operator events apply to registered projects only. Their forge cannot be reached (port 9, discard): the
    // issues' forge effects wait in the outbox instead of moving them on.
    await operator.call("PUT", `/api/v1/projects/${PROJECT}`, {
      forge: "forgejo",
      apiUrl: "http://127.0.0.1:9/api/v1",
      repo: "acme/web",
      webhookSecret: "browser test webhook secret",
      forgeToken: "browser-test-forge-token",
    });
    await operator.registerProject(LIVE, gitServer.url("upstream.git"));
    await operator.registerProject(HISTORY, "http://127.0.0.1:9/acme/hist.git");
    // The held merge comes through the lifecycle itself: events as the operator API takes them.
    for (const [i, event] of PATHS.awaiting_approval.entries())
      await operator.event(PROJECT, HELD, event, `seed-${i}`);
    // The board reads D1, which hears of the issue from its Durable Object's outbox a moment later.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { issues } = await operator.call<{ issues: { number: number }[] }>(
        "GET",
        `/api/v1/projects/${PROJECT}/issues?state=awaiting_approval`,
      );
      if (issues.some((issue) => issue.number === HELD)) break;
      if (Date.now() > deadline) throw new Error(`#${HELD} did not reach D1 as awaiting_approval`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    page = context.pages()[0] ?? (await context.newPage());
  }, 60_000);

  afterAll(async () => {
    await stopRunner(runner);
    // What a runner that had to be killed left of its session.
    if (root) await killLeftoverSessions(join(realpathSync(root), "work", "agents"));
    await context?.close();
    await Promise.all([worker?.stop(), gitServer?.close(), forge?.close()]);
    await rm(profile, { recursive: true, force: true });
    await rm(root, { recursive: true, force: true });
    await rm(forgeData, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(OUTPUT, `dashboard-${name}.png`), fullPage: true });

  it("signs in, opens an issue, and approves the held merge", async () => {
    await page.goto(`${worker.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    await shot("1-login");

    await page.fill('input[name="token"]', TEST_ADMIN_TOKEN);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${worker.url}/dashboard`);
    expect(await page.textContent("h1")).toBe("Projects");
    expect(await page.locator("section.project h2 a", { hasText: PROJECT }).count()).toBe(1);
    await shot("2-projects");

    await page.click(`section.project h2 a:text-is("${PROJECT}")`);
    await page.waitForURL(`${worker.url}/dashboard/projects/${PROJECT}`);
    const approvalColumn = page.locator("section.column", { has: page.locator(".state-awaiting_approval") });
    expect(await approvalColumn.locator(".count").textContent()).toBe("1");
    await shot("3-board");

    await approvalColumn.locator(`a:has-text("#${HELD} Pin the CI image")`).click();
    await page.waitForURL(`${worker.url}/dashboard/projects/${PROJECT}/issues/${HELD}`);
    expect(await page.locator("svg[aria-label^='Tokens per iteration'] rect").count()).toBe(12);
    expect(await page.locator("table.timeline").first().textContent()).toContain("review");
    // Two critic rounds, numbered as they came.
    expect(await page.locator("h2:has-text('Critic rounds') + ol > li > strong").allTextContents()).toEqual([
      "Round 1: REQUEST_CHANGES",
      "Round 2: APPROVE",
    ]);
    await shot("4-issue");

    await page.click("nav >> text=Approvals");
    await page.waitForURL(`${worker.url}/dashboard/approvals`);
    const held = page.locator("li.approval", { hasText: `${PROJECT}#${HELD}` });
    await submit(page, held.locator('button[value="approve"]'));
    expect(page.url()).toBe(`${worker.url}/dashboard/approvals`);
    expect(await page.textContent(".flash")).toBe(`Approve: ${PROJECT}#${HELD} is now merging`);
    await shot("5-approved");
    // The list reads D1, which the issue's Durable Object updates from its outbox right after.
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator("li.approval", { hasText: `${PROJECT}#${HELD}` }).count();
        },
        { timeout: 5_000 },
      )
      .toBe(0);

    const view = await operator.issue(PROJECT, HELD);
    expect(view.state).toBe("merging");
    expect(view.history.at(-1)).toMatchObject({ event: "human_approval", cause: { kind: "operator" } });

    await page.click("nav >> text=Runners");
    const seeded = page.locator("tr", { hasText: "build-host-a" });
    // Silent for five minutes with a job leased: offline, not "idle" until the supervisor's next check.
    expect(await seeded.locator(".presence").textContent()).toBe("offline");
    // Since its last call, however long the setup took since the seeding.
    expect(await seeded.textContent()).toMatch(/silent since \d+ min ago.*web#101 implement/);
    expect(await seeded.locator(".presence + small time").getAttribute("datetime")).toBe(
      new Date(seededAt - SILENT_MS).toISOString(),
    );
    await shot("6-runners");
  }, 30_000);

  it("an issue page follows the issue as it changes, without a reload", async () => {
    const live = 8;
    const send = (id: string, event: object) => operator.event(PROJECT, live, event, id);
    await send("live-1", { type: "triage", blockers: [] });
    await page.goto(`${worker.url}/dashboard/projects/${PROJECT}/issues/${live}`);
    expect(await page.locator("dd .state").textContent()).toBe("queued");
    // Set on this document only: a reload would lose it.
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));

    await send("live-2", { type: "abandon", by: "op" });
    await page.locator("dd .state-abandoned").waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(await page.locator("table.timeline").last().textContent()).toContain("abandon");
    await shot("7-live");
  }, 30_000);

  it("follows a real runner's session, its job, usage and outbox without a reload; the runner offline once stopped", async () => {
    await operator.triage(LIVE, 1);
    const issuePage = `${worker.url}/dashboard/projects/${LIVE}/issues/1`;
    await page.goto(issuePage);
    expect(await page.locator("text=No session activity yet.").count()).toBe(1);
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
    const notReloaded = () => page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded);

    // Started only now, so that everything the session does reaches the page after it loaded.
    const scriptFile = join(root, "script.json");
    await writeFile(scriptFile, JSON.stringify(SCRIPT));
    runner = startRunner(
      await writeRunnerConfig(join(root, "runner-config.json"), {
        workerUrl: worker.url,
        registrationToken: await operator.registrationToken(),
        workDir: join(root, "work"),
        name: RUNNER_NAME,
        driver: "scripted",
        script: scriptFile,
        git: { username: "conveyor-bot", token: GIT_TOKEN },
        projects: [LIVE],
        claimWaitMs: 1_000,
      }),
    );

    await page.locator("dd .state-running").waitFor({ timeout: 30_000 });
    const tools = page.locator("ol.activity li.activity-tool code");
    await tools.filter({ hasText: "Bash wc -l notes/live.txt" }).waitFor({ timeout: 30_000 });
    expect(await tools.allTextContents()).toEqual(["Write notes/live.txt", "Bash wc -l notes/live.txt"]);
    await shot("8-session");

    // Done: the job's row, the session's usage, and the effects it caused (the forge, port 9, refuses
    // them: they wait in the outbox, the first with its error), as D1 and the issue's object record them.
    await page.locator("dd .state-awaiting_ci").waitFor({ timeout: 30_000 });
    const job = page.locator("h2:has-text('Jobs') + table tbody tr").first();
    await job.locator("td:nth-child(3):text-is('done')").waitFor({ timeout: 15_000 });
    await page.locator("h2:has-text('Usage per iteration') + figure + table td:text-is('#1')").waitFor();
    await page
      .locator("dt:text-is('outbox effect:open_pull_request') + dd", { hasText: "1 pending" })
      .waitFor({ timeout: 15_000 });
    // Its first attempt's error reaches the page when the attempt fails, which may be after the line above.
    await page
      .locator("dt:text-is('outbox effect:labels') + dd", { hasText: /pending · last error: / })
      .waitFor({ timeout: 15_000 });
    expect(await notReloaded()).toBe(true);
    await shot("8b-session-done");

    await page.goto(`${worker.url}/dashboard/runners`);
    const row = page.locator("tr", { hasText: RUNNER_NAME });
    expect(await row.locator(".presence").textContent()).toBe("idle");

    // Stopped (as systemctl stop does): offline within one heartbeat period, not idle for ten minutes.
    const stoppedAt = Date.now();
    runner.process.kill("SIGTERM");
    await runner.exit;
    await expect
      .poll(
        async () => {
          await page.reload();
          return row.locator(".presence").textContent();
        },
        { timeout: MAX_HEARTBEAT_INTERVAL_MS - (Date.now() - stoppedAt), interval: 200 },
      )
      .toBe("offline");
    expect(Date.now() - stoppedAt).toBeLessThan(MAX_HEARTBEAT_INTERVAL_MS);
    expect(await row.textContent()).toContain("stopped");
    await shot("8c-runner-offline");
  }, 90_000);

  it("health: never checked is not healthy, and the next check reads in N s, ticking", async () => {
    await operator.call("PUT", "/api/v1/projects/watch", {
      forge: "forgejo",
      apiUrl: "http://127.0.0.1:9/api/v1",
      repo: "acme/watch",
      webhookSecret: "browser test webhook secret",
      forgeToken: "browser-test-forge-token",
      supervisor: { periodMs: 50_000, forgeIssues: false },
    });
    await page.goto(`${worker.url}/dashboard/projects/watch/health`);
    expect(await page.textContent("section h2 .headline")).toBe("not checked yet");
    const next = page.locator("p.meta time");
    const first = await next.textContent();
    expect(first).toMatch(/^in \d+ s$/);
    // The time ticks on the page, with no reload.
    await expect.poll(() => next.textContent(), { timeout: 5_000 }).not.toBe(first);
    expect(Number((await next.textContent())?.match(/\d+/)?.[0])).toBeLessThan(
      Number(first?.match(/\d+/)?.[0]),
    );
    await page.click("nav >> text=Health");
    const watch = page.locator("section", { has: page.locator("h2 a:text-is('watch')") });
    expect(await watch.locator("h2 .headline").textContent()).toBe("not checked yet");
    expect(await page.locator("section h2 .headline:text-is('healthy')").count()).toBe(0);
    await shot("10-health");
  }, 30_000);

  it("a red CI row names its failing check, why it failed, and links its log", async () => {
    const red = 11;
    const log = "http://127.0.0.1:9/ci/repos/1/pipeline/7";
    for (const event of PATHS.awaiting_ci) await operator.event(PROJECT, red, event);
    await operator.event(PROJECT, red, {
      type: "ci",
      result: "red",
      headSha: HEAD,
      excerpt: "ci/woodpecker/pr/test: failure — 2 tests failed",
      checks: [
        { name: "ci/woodpecker/pr/test", outcome: "failure", description: "2 tests failed", url: log },
      ],
    });
    await page.goto(`${worker.url}/dashboard/projects/${PROJECT}/issues/${red}`);
    const row = page.locator("h2:has-text('CI attempts') + table tbody tr").first();
    expect(await row.locator("td").nth(3).textContent()).toBe("ci red");
    expect(await row.locator(".checks li").textContent()).toBe(
      "ci/woodpecker/pr/test: failure — 2 tests failed log",
    );
    expect(await row.locator(".checks a.log").getAttribute("href")).toBe(log);
    await shot("11-ci-red");
  }, 30_000);

  it("an action's dangerous step is listed once, with its command; decided items keep their audit trail", async () => {
    await forge.createRepo({
      owner: "acme",
      name: "ops",
      seed: { files: { "README.md": "# ops\n", ".conveyor/formulas/rotate-token.md": ROTATE_TOKEN_MD } },
    });
    const bot = forge.createUser("ops-bot");
    forge.addCollaborator("acme/ops", bot.login, "admin");
    await operator.call("PUT", `/api/v1/projects/${OPS}`, {
      forge: "forgejo",
      apiUrl: forge.apiUrl,
      repo: "acme/ops",
      webhookSecret: "browser test webhook secret",
      forgeToken: bot.token,
      actionSecrets: { DEPLOY_TOKEN: "browser-test-deploy-token" },
    });
    // The project's labels on the forge, as `conveyor project add` makes them.
    await operator.call("POST", `/api/v1/projects/${OPS}/setup`, {
      webhookUrl: `${worker.url}/hooks/${OPS}`,
    });
    const client = createForgeClient({
      forge: "forgejo",
      apiUrl: forge.apiUrl,
      repo: "acme/ops",
      token: bot.token,
    });
    const body = "Formula: rotate-token";
    const numbers: number[] = [];
    for (const title of ["Rotate the deploy token", "Rotate it again"]) {
      const { number } = await client.createIssue({ title, body, labels: [] });
      numbers.push(number);
      // A writer queued it; a session ran the formula up to its dangerous step, which waits for the vault.
      for (const event of [
        {
          type: "triage",
          blockers: [],
          brief: { title, body, by: "maintainer" },
          action: { formula: "rotate-token" },
        },
        { type: "dispatched", jobId: `ops-job-${number}`, runnerId: "runner-ops" },
        { type: "phase", phase: "vault", step: "rotate", sessionId: `sess-${number}` },
      ])
        await operator.event(OPS, number, event);
    }
    const [approved = 0, rejected = 0] = numbers;
    await expect
      .poll(
        async () =>
          (await operator.call<{ items: unknown[] }>("GET", `/api/v1/projects/${OPS}/vault?state=pending`))
            .items.length,
        { timeout: 20_000 },
      )
      .toBe(2);

    await page.goto(`${worker.url}/dashboard/approvals`);
    const itemOf = (number: number) =>
      page.locator("li.vault-item", { hasText: `${OPS}#${number} (step rotate)` });
    for (const number of numbers) {
      expect(await itemOf(number).count()).toBe(1);
      expect(await itemOf(number).locator("code.command").textContent()).toBe("./rotate.sh");
      // Not again as a merge to approve with buttons of its own.
      expect(await page.locator("li.approval", { hasText: `${OPS}#${number}` }).count()).toBe(0);
    }
    await shot("12-vault-pending");

    // The issue's page names its item and decides it with the vault's form only.
    await page.goto(`${worker.url}/dashboard/projects/${OPS}/issues/${rejected}`);
    const named = await page.locator("dt:text-is('vault item') + dd a").textContent();
    expect(named).toMatch(/^v\d+ \(step rotate\)$/);
    expect(
      await page.locator(`form[action$="/issues/${rejected}/actions"] button[value="approve"]`).count(),
    ).toBe(0);
    // An event the issue, past triage, refuses (409): recorded all the same, and its page told.
    const refusedEvent = () =>
      expect(operator.event(OPS, rejected, { type: "triage", blockers: [] })).rejects.toThrow(/: 409 /);
    const reason = page.locator("li.vault-item input[name=reason]");
    await reason.fill("not during the freeze");
    // The page reloads its content as the issue changes: what the operator is typing stays, focus included.
    await liveUpdate(page, refusedEvent);
    expect(await reason.inputValue()).toBe("not during the freeze");
    expect(await page.locator("li.vault-item input[name=reason]:focus").count()).toBe(1);
    await submit(page, page.locator("li.vault-item button[value=reject]"));
    expect(page.url()).toBe(`${worker.url}/dashboard/projects/${OPS}/issues/${rejected}`);
    expect(await page.textContent(".flash")).toMatch(/^ops v\d+ is now rejected$/);
    // Whatever reaches the page live after it loaded, the flash answering the decision stays.
    await liveUpdate(page, refusedEvent);
    expect(await page.locator(".flash").allTextContents()).toEqual([
      expect.stringMatching(/is now rejected$/),
    ]);

    await page.goto(`${worker.url}/dashboard/approvals`);
    await submit(page, itemOf(approved).locator("button[value=approve]"));
    expect(await page.textContent(".flash")).toMatch(/^ops v\d+ is now approved$/);

    // Decided, both stay in the vault's record with who asked, who decided, when and why.
    await page.click("nav >> text=Vault");
    await page.waitForURL(`${worker.url}/dashboard/vault`);
    await expect
      .poll(async () => {
        await page.goto(`${worker.url}/dashboard/vault?project=${OPS}`);
        return page.locator("li.vault-item .state").allTextContents();
      })
      .toEqual(["rejected", "approved"]);
    const trail = (number: number) =>
      page
        .locator("li.vault-item", { hasText: `${OPS}#${number} (step rotate)` })
        .locator("ol.audit li")
        .allTextContents();
    expect((await trail(rejected)).map((e) => e.replace(/^\S+ \S+ UTC /, ""))).toEqual([
      `requested by issue #${rejected} (rotate)`,
      expect.stringMatching(/^classified by policy/),
      "rejected by operator: not during the freeze",
    ]);
    expect((await trail(approved)).at(-1)).toMatch(/ approved by operator$/);
    await shot("13-vault-decided");
  }, 60_000);

  it("outcomes: the plots of a seeded history, across projects and of one", async () => {
    await page.click("nav >> text=Outcomes");
    await page.waitForURL(`${worker.url}/dashboard/outcomes`);
    expect(await page.locator("figure.chart svg[role=img]").count()).toBe(10);
    await page.click(`p.chips a:text-is("${HISTORY}")`);
    await page.waitForURL(`${worker.url}/dashboard/projects/${HISTORY}/outcomes`);
    expect(await page.locator("dl.totals dd").first().textContent()).toBe("20 issues (30 finished)");
    // Ten days with two merges each, as bars; the lead times and rates as lines.
    const bars = page.locator("svg[aria-label='Issues merged per day'] rect");
    const heights = await bars.evaluateAll((rects) => rects.map((r) => Number(r.getAttribute("height"))));
    expect(heights.filter((h) => h > 0)).toHaveLength(10);
    for (const plot of ["Label → merged", "First-pass CI rate", "Cache-hit ratio"])
      expect(await page.locator(`svg[aria-label^='${plot}'] polyline`).count()).toBeGreaterThan(0);
    expect(await page.locator("table.causes td").first().textContent()).toContain("the session stopped");
    expect(await page.locator("table.waiting tbody tr").count()).toBeGreaterThanOrEqual(5);
    await shot("14-outcomes");
  }, 30_000);

  it("links the issue, its pull request, branch and head commit to the forge's web pages", async () => {
    const head = "0123456789abcdef0123456789abcdef01234567";
    // A GitHub Enterprise project beside the Forgejo one: the same pages under other paths, on the same host.
    await operator.call("PUT", "/api/v1/projects/gh", {
      forge: "github",
      apiUrl: "http://127.0.0.1:9/api/v3",
      repo: "acme/web",
      webhookSecret: "browser test webhook secret",
      forgeToken: "browser-test-forge-token",
    });
    const web = "http://127.0.0.1:9/acme/web";
    const cases = [
      { project: PROJECT, pull: `${web}/pulls/42`, branch: `${web}/src/branch/conveyor/9` },
      { project: "gh", pull: `${web}/pull/42`, branch: `${web}/tree/conveyor/9` },
    ];
    for (const { project, pull, branch } of cases) {
      for (const event of [
        ...PATHS.running,
        { type: "phase", phase: "awaiting_ci", headSha: head, branch: "conveyor/9", sessionId: "sess-9" },
        { type: "pr_opened", number: 42, byConveyor: true },
      ])
        await operator.event(project, 9, event);
      await page.goto(`${worker.url}/dashboard/projects/${project}/issues/9`);
      const links = await page
        .locator("dl.facts dd a")
        .evaluateAll((anchors) => anchors.map((a) => [a.textContent, a.getAttribute("href")]));
      expect(Object.fromEntries(links)).toEqual({
        "#9": `${web}/issues/9`,
        "conveyor/9": branch,
        [head.slice(0, 12)]: `${web}/commit/${head}`,
        "#42": pull,
      });
    }
    await shot("9-forge-links");
  }, 30_000);

  it("alerts: a silent runner's alert is open with who reported it, then resolved once the operator revokes the runner", async () => {
    const key = `runner_offline:${SILENT_RUNNER}`;
    // On the local forge: a resolved finding's forge issue, if one was ever opened, is looked for there.
    await forge.createRepo({
      owner: "acme",
      name: ALERTING,
      seed: { files: { "README.md": "# alerting\n" } },
    });
    const bot = forge.createUser("alerting-bot");
    forge.addCollaborator(`acme/${ALERTING}`, bot.login, "admin");
    await operator.call("PUT", `/api/v1/projects/${ALERTING}`, {
      forge: "forgejo",
      apiUrl: forge.apiUrl,
      repo: `acme/${ALERTING}`,
      webhookSecret: "browser test webhook secret",
      forgeToken: bot.token,
      supervisor: { runnerSilentMs: 60_000, forgeIssues: false },
    });
    const check = () => operator.call("POST", `/api/v1/projects/${ALERTING}/health/check`);
    const rowIn = (table: "open" | "resolved") => page.locator(`table.alerts-${table} tr`, { hasText: key });
    /** The supervisor's report reaches the factory's AlertDO from the project's outbox, just after the check. */
    const shown = (table: "open" | "resolved", count: number) =>
      expect
        .poll(
          async () => {
            await page.reload();
            return rowIn(table).count();
          },
          { timeout: 10_000 },
        )
        .toBe(count);
    const sources = (row: Locator) =>
      row
        .locator("td:nth-child(3) a")
        .evaluateAll((anchors) => anchors.map((a) => [a.textContent, a.getAttribute("href")]));
    const timeIn = async (row: Locator, cell: string) =>
      Date.parse((await row.locator(`td.${cell} time`).getAttribute("datetime")) ?? "");
    const health = `/dashboard/projects/${ALERTING}/health`;

    const checkedAt = Date.now();
    await check();
    await page.click("nav >> text=Alerts");
    await page.waitForURL(`${worker.url}/dashboard/alerts`);
    await shown("open", 1);
    const open = rowIn("open");
    expect(await open.locator(".priority").textContent()).toBe("P1");
    expect(await open.locator(".title").textContent()).toMatch(
      /^runner build-host-b has not been heard from/,
    );
    expect(await sources(open)).toEqual([[`supervisor of ${ALERTING}`, health]]);
    const openedAt = await timeIn(open, "opened");
    expect(openedAt).toBeGreaterThanOrEqual(checkedAt);
    expect(openedAt).toBeLessThanOrEqual(Date.now());
    // No webhook or email here: the page says the alerts reach no one else.
    expect(await page.textContent(".channels")).toContain("No operator channel is configured");
    await shot("15-alert-open");

    // Gone for good, as the alert advises: revoked, the next check no longer finds it.
    await page.click("nav >> text=Runners");
    await page.waitForURL(`${worker.url}/dashboard/runners`);
    await submit(page, page.locator("tr", { hasText: "build-host-b" }).locator("button.action-revoke"));
    expect(await page.textContent(".flash")).toBe(`Revoked ${SILENT_RUNNER}: its token no longer works`);
    const resolvedAfter = Date.now();
    await check();
    await page.goto(`${worker.url}/dashboard/alerts`);
    await shown("resolved", 1);
    expect(await rowIn("open").count()).toBe(0);
    const resolved = rowIn("resolved");
    expect(await sources(resolved)).toEqual([[`supervisor of ${ALERTING}`, health]]);
    expect(await resolved.locator("td.resolved a").textContent()).toBe(`supervisor of ${ALERTING}`);
    expect(await timeIn(resolved, "opened")).toBe(openedAt);
    expect(await timeIn(resolved, "resolved")).toBeGreaterThanOrEqual(resolvedAfter);
    expect(await resolved.locator("td:nth-child(6)").textContent()).toMatch(/^\d+ (s|min \d\d s)$/);
    await shot("16-alert-resolved");
  }, 30_000);
});

/**
 * Clicks a form's button and waits for the page its answer loads: `waitForURL` would not wait when the form
 * returns to the page it is on.
 */
async function submit(page: Page, button: Locator): Promise<void> {
  const loaded = page.waitForEvent("load");
  await button.click();
  await loaded;
}

/** Runs `change` and waits until the live page has reloaded its content (it replaces <main>'s children). */
async function liveUpdate(page: Page, change: () => Promise<unknown>): Promise<void> {
  await page.locator("main > h1").evaluate((h1) => h1.setAttribute("data-before-update", ""));
  await change();
  await page.locator("main > h1:not([data-before-update])").waitFor({ timeout: 10_000 });
}

/** SIGTERM (the session is aborted, its sleep cut short), SIGKILL if it lingers. */
async function stopRunner(runner: RunnerProcess | undefined): Promise<void> {
  if (!runner || runner.process.exitCode !== null) return;
  runner.process.kill("SIGTERM");
  const killer = setTimeout(() => runner.process.kill("SIGKILL"), 10_000);
  await runner.exit;
  clearTimeout(killer);
}

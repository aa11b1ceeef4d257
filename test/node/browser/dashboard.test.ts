/**
 * The dashboard in a real browser: Chromium (Debian's /usr/bin/chromium) driven by playwright-core against the
 * local Worker with seeded data. Signs in, opens an issue, approves a held merge, watches an issue and a real
 * runner's scripted session live, follows the forge links. Screenshots: test-output/.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Script } from "../../../runner/drivers/scripted.ts";
import { killLeftoverSessions } from "../../../runner/leftovers.ts";
import { PATHS } from "../../support/lifecycle-samples.ts";
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
/** The project a real runner works on, from a local git upstream. */
const LIVE = "live";
const GIT_TOKEN = "git-token-browser-31";
/**
 * A session that writes a file, runs a command, then thinks for a minute: the test watches it meanwhile and
 * stops the runner when done (the sleep is interrupted), so the minute is never waited out.
 */
const SCRIPT: Script = {
  implement: [
    { write: "notes/live.txt", content: "seen from the browser\n" },
    { run: "wc -l notes/live.txt" },
    { sleep: 60_000 },
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
        created_at: now - 5 * DAY,
        last_seen_at: now - 20_000,
      },
    ]),
    ...insertRows("critic_reports", [
      {
        id: "r-1",
        project_id: PROJECT,
        number: HELD,
        round: 1,
        head_sha: "abc1234",
        verdict: "APPROVE",
        summary: "Pins the image; the workflow change needs a human.",
        findings: JSON.stringify([
          { severity: "nit", file: ".woodpecker.yml", line: 4, comment: "add a comment", inScope: true },
        ]),
        at: now - DAY,
      },
    ]),
  ]);
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

  beforeAll(async () => {
    const now = Date.now();
    profile = await mkdtemp(join(tmpdir(), "conveyor-chromium-"));
    root = await tempDir("browser-runner");
    await mkdir(OUTPUT, { recursive: true });
    [worker, context, gitServer] = await Promise.all([
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
    await Promise.all([worker?.stop(), gitServer?.close()]);
    await rm(profile, { recursive: true, force: true });
    await rm(root, { recursive: true, force: true });
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
    expect(await page.locator("text=Round 1: APPROVE").count()).toBe(1);
    await shot("4-issue");

    await page.click("nav >> text=Approvals");
    await page.waitForURL(`${worker.url}/dashboard/approvals`);
    const held = page.locator("li.approval", { hasText: `${PROJECT}#${HELD}` });
    await held.locator('button[value="approve"]').click();
    await page.waitForURL(`${worker.url}/dashboard/approvals`);
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
    expect(await page.textContent("table")).toContain("build-host-a");
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

  it("shows a real runner's scripted session's tool calls while it runs, without a reload", async () => {
    await operator.triage(LIVE, 1);
    await page.goto(`${worker.url}/dashboard/projects/${LIVE}/issues/1`);
    expect(await page.locator("text=No session activity yet.").count()).toBe(1);
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));

    // Started only now, so that everything the session does reaches the page after it loaded.
    const scriptFile = join(root, "script.json");
    await writeFile(scriptFile, JSON.stringify(SCRIPT));
    runner = startRunner(
      await writeRunnerConfig(join(root, "runner-config.json"), {
        workerUrl: worker.url,
        registrationToken: await operator.registrationToken(),
        workDir: join(root, "work"),
        driver: "scripted",
        script: scriptFile,
        git: { username: "conveyor-bot", token: GIT_TOKEN },
        projects: [LIVE],
        claimWaitMs: 1_000,
      }),
    );

    const tools = page.locator("ol.activity li.activity-tool code");
    await tools.filter({ hasText: "Bash wc -l notes/live.txt" }).waitFor({ timeout: 30_000 });
    expect(await tools.allTextContents()).toEqual(["Write notes/live.txt", "Bash wc -l notes/live.txt"]);
    // Still at it: the session sleeps on, and the page shows it running.
    await page.locator("dd .state-running").waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(runner.process.exitCode).toBeNull();
    await shot("8-session");
  }, 45_000);

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
});

/** SIGTERM (the session is aborted, its sleep cut short), SIGKILL if it lingers. */
async function stopRunner(runner: RunnerProcess | undefined): Promise<void> {
  if (!runner || runner.process.exitCode !== null) return;
  runner.process.kill("SIGTERM");
  const killer = setTimeout(() => runner.process.kill("SIGKILL"), 10_000);
  await runner.exit;
  clearTimeout(killer);
}

/**
 * The mirror's backfill against the local forge: a repository older than its registration (issues brought in
 * with their own authors, times and comments) is mirrored whole, dated, with its pull requests' linked issues,
 * page by page; an item closed while the listing is paged makes the pass run again; a rate limit spent past
 * the backfill's floor makes it wait for the reset, and the operator sees why; a forge that refuses for good
 * stops it until the project's credentials change.
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createForgeClient } from "../../src/forge/client/index.ts";
import { projectStub } from "../../src/project-stub.ts";
import { told } from "./support/alerts.ts";
import { backfilled } from "./support/reconcile.ts";
import { control, services } from "./support/review.ts";
import { freshProject, OPERATOR, registerProject } from "./support/webhooks.ts";

const DAY = 86_400_000;
const at = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY).toISOString().replace(/\.\d{3}Z$/, "Z");

type Row = {
  number: number;
  kind: string;
  state: string;
  author: string;
  comments: number;
  closes: string;
  created_at: number | null;
  forge_updated_at: number | null;
};
const mirrored = async (project: string) =>
  (
    await env.DB.prepare(
      "SELECT number, kind, state, author, comments, closes, created_at, forge_updated_at FROM forge_issues WHERE project_id = ? ORDER BY number",
    )
      .bind(project)
      .all<Row>()
  ).results;

const operator = (project: string, method: "GET" | "POST") =>
  SELF.fetch(`https://conveyor.test/api/v1/projects/${project}/backfill`, { method, headers: OPERATOR });

/** A repository with `count` issues from before the registration, its own forge account, and a project. */
async function oldRepository(name: string, count: number) {
  const project = freshProject(name);
  const { fullName: repo } = await control<{ fullName: string }>("repo", {
    name: project,
    files: { "README.md": "# old\n" },
  });
  // Its own account: spending its rate limit touches no other test's.
  const account = await control<{ login: string; token: string }>("user", {
    repo,
    login: `bot-${project}`,
    level: "admin",
  });
  const issues = Array.from({ length: count }, (_, i) => ({
    title: `Old issue ${i + 1}`,
    body: i === 1 ? "Depends on #1" : "",
    author: i % 2 === 0 ? "alice" : "bob",
    createdAt: at(400 - i),
    updatedAt: at(i < 5 ? 200 - i : 10 - (i % 10)),
    comments: i % 3,
  }));
  await control("import-issues", { repo, issues });
  const forge = createForgeClient({
    forge: "forgejo",
    apiUrl: services.forgeApiUrl,
    repo,
    token: account.token,
  });
  return { project, repo, account, forge };
}

describe("the mirror's backfill", () => {
  it("mirrors every open issue and pull request of an older repository, dated, paged and checked", async () => {
    const { project, repo, account, forge } = await oldRepository("backfill", 24);
    await control("push", { repo, branch: "fix-3", files: { "fix.txt": "3\n" } });
    const pull = await forge.createPullRequest({
      head: "fix-3",
      base: "main",
      title: "Fix it",
      body: "Fixes #3",
    });
    await control("listing", { repo, pageSize: 5 });
    // The newest item of the first page closes before the second page is read: the offset listing then
    // steps over one open item, and the pass must run again to find it.
    await control("listing", {
      repo,
      before: { page: 2, nextSecond: true, action: { kind: "close", number: 24 } },
    });
    await registerProject(project, "forgejo", repo, {
      apiUrl: services.forgeApiUrl,
      forgeToken: account.token,
    });

    const status = await backfilled(project);
    // The second pass found nothing closed under it.
    expect(status).toMatchObject({ phase: "done", pass: 2, listed: 24, reason: null });
    const rows = await mirrored(project);
    expect(rows.filter((r) => r.state === "open").map((r) => r.number)).toEqual([
      ...Array.from({ length: 23 }, (_, i) => i + 1),
      pull.number,
    ]);
    const stale = rows.find((r) => r.number === 1);
    expect(stale).toMatchObject({ kind: "issue", author: "alice", comments: 0 });
    expect(Math.round((Date.now() - (stale?.forge_updated_at ?? 0)) / DAY)).toBe(200);
    expect(Math.round((Date.now() - (stale?.created_at ?? 0)) / DAY)).toBe(400);
    expect(rows.find((r) => r.number === 3)?.comments).toBe(2);
    expect(rows.find((r) => r.number === pull.number)).toMatchObject({ kind: "pull", closes: "[3]" });

    const shown = await operator(project, "GET");
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({ project, phase: "done", listed: 24 });
  });

  it("waits for the rate limit's reset below its floor, and says why", async () => {
    const { project, repo, account } = await oldRepository("backfill-limit", 3);
    await registerProject(project, "forgejo", repo, {
      apiUrl: services.forgeApiUrl,
      forgeToken: account.token,
    });
    await backfilled(project);

    await control("rate-limit", { login: account.login, used: 2_600 });
    const again = await operator(project, "POST");
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ phase: "running", pass: 1, page: 1 });
    const before = await control<{ charged: number }>("api-calls", { repo });
    let status = await backfilledOrWaiting(project);
    // The page that told the budget is read; no more.
    expect(status).toMatchObject({
      phase: "waiting",
      reason: expect.stringContaining("2399 of 5000 requests left"),
    });
    expect((await control<{ charged: number }>("api-calls", { repo })).charged - before.charged).toBe(1);
    status = await backfilledOrWaiting(project);
    expect(status.phase).toBe("waiting");
    expect(status.nextAt).toBeGreaterThan(Date.now());
    expect((await control<{ charged: number }>("api-calls", { repo })).charged - before.charged).toBe(1);
  });

  it("stops when the forge refuses for good, tells the operator once, and resumes when the token changes", async () => {
    const { project, repo, account } = await oldRepository("backfill-refused", 3);
    const register = (forgeToken: string) =>
      registerProject(project, "forgejo", repo, { apiUrl: services.forgeApiUrl, forgeToken });
    const calls = async () => (await control<{ charged: number }>("api-calls", { repo })).charged;
    const key = `backfill:${project}:refused`;
    await register("a-revoked-token");

    let status = await backfilledOrWaiting(project);
    expect(status).toMatchObject({
      phase: "refused",
      nextAt: null,
      reason: expect.stringContaining("(401)"),
    });
    // Nothing more is asked: not by a step, nor by a registration with the same credentials.
    const asked = await calls();
    status = await backfilledOrWaiting(project);
    await register("a-revoked-token");
    expect((await projectStub(env, project).backfillMirror(project)).phase).toBe("refused");
    expect(await calls()).toBe(asked);
    // The operator hears of it once (sent from the project's outbox with its supervisor's alerts).
    await projectStub(env, project).superviseNow(project);
    expect((await told(key)).map((m) => m.conveyor.kind)).toEqual(["opened"]);

    // A new token: the backfill runs again, and the alert resolves.
    await register(account.token);
    expect(await backfilled(project)).toMatchObject({ phase: "done", listed: 3 });
    await projectStub(env, project).superviseNow(project);
    expect((await told(key)).map((m) => m.conveyor.kind)).toEqual(["opened", "resolved"]);
  });

  it("answers the operator with a one-line reason for what it cannot do", async () => {
    const bad = await SELF.fetch("https://conveyor.test/api/v1/projects/Not_An_Id!/backfill", {
      method: "POST",
      headers: OPERATOR,
    });
    expect(bad.status).toBe(400);
    const unknown = await operator(freshProject("nobody"), "POST");
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/is not registered/);
  });
});

/** One step now: the backfill's status after it. */
const backfilledOrWaiting = (project: string) =>
  projectStub(env, project).backfillMirror(project, { step: true });

import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueStub } from "../../src/issue-stub.ts";
import { FIXTURE_CASES } from "../support/webhook-fixtures.ts";
import type { Delivery } from "../support/webhook-headers.ts";
import { claim, newRunner } from "./support/jobs.ts";
import { backfilled } from "./support/reconcile.ts";
import { control, services } from "./support/review.ts";
import {
  deliver,
  fixtureBytes,
  freshProject,
  OPERATOR,
  pretty,
  registerProject,
} from "./support/webhooks.ts";

const cases = Object.entries(FIXTURE_CASES);

async function deliveryRows(project: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, event, outcome, number FROM deliveries WHERE project_id = ? ORDER BY received_at",
  )
    .bind(project)
    .all<{ id: string; event: string; outcome: string; number: number | null }>();
  return results;
}

/** Registers a project for the fixture's repository (any repository for deliveries Conveyor ignores). */
async function projectFor(path: string) {
  const fixture = FIXTURE_CASES[path];
  if (!fixture) throw new Error(path);
  const project = freshProject("fx");
  const repo = fixture.expected.kind === "event" ? fixture.expected.event.repository : "someone/elsewhere";
  await registerProject(project, fixture.delivery.forge, repo);
  return { project, fixture, body: fixtureBytes(path) };
}

describe("every fixture, as its forge sends it", () => {
  it.each(cases)("%s: signed → 2xx once; replays and redeliveries → 200 and no change", async (path) => {
    const { project, fixture, body } = await projectFor(path);
    const res = await deliver(project, fixture.delivery, body, { deliveryId: "first" });
    expect(res.status).toBe(202);
    const answer = (await res.json()) as Record<string, unknown>;
    if (fixture.expected.kind === "ignored") expect(answer).toEqual({ ignored: fixture.expected.reason });
    const [row] = await deliveryRows(project);
    expect(row).toMatchObject({ id: `${project}:first`, event: fixture.eventName });
    expect(["processed", "ignored"]).toContain(row?.outcome);

    const again = await deliver(project, fixture.delivery, body, { deliveryId: "first" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ duplicate: true, outcome: row?.outcome });
    // A Gitea-style replay: same bytes under a new delivery id (here uploaded without a length).
    const replay = await deliver(project, fixture.delivery, body, { deliveryId: "replayed", streamed: true });
    expect(replay.status).toBe(200);
    expect(await deliveryRows(project)).toHaveLength(1);
  });

  it.each(cases)("%s: wrong, empty or missing signature → 401 and nothing stored", async (path) => {
    const { project, fixture, body } = await projectFor(path);
    const wrong = await deliver(project, fixture.delivery, body, { secret: "not the secret" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: "signature does not match" });
    const unsigned = await deliver(project, fixture.delivery, body, { secret: null });
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toEqual({ error: "signature missing" });
    expect(await deliveryRows(project)).toEqual([]);
  });

  it.each(cases)("%s: truncated (validly signed) → 400 with one line", async (path) => {
    const { project, fixture, body } = await projectFor(path);
    const res = await deliver(project, fixture.delivery, body.slice(0, Math.floor(body.length / 2)));
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toMatch(/\S/);
    expect(error).not.toContain("\n");
    expect(await deliveryRows(project)).toEqual([]);
  });
});

describe("POST /hooks/:project refuses", () => {
  const issues = "gitea/issues.opened.json";

  it("an oversized body with 413", async () => {
    const { project, fixture } = await projectFor(issues);
    const huge = new Uint8Array(1024 * 1024 + 1).fill(32);
    const res = await deliver(project, fixture.delivery, huge);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "body exceeds 1 MiB" });
  });

  it("an oversized body streamed without a length with 413", async () => {
    const { project, fixture } = await projectFor(issues);
    const huge = new Uint8Array(1024 * 1024 + 1).fill(32);
    const res = await deliver(project, fixture.delivery, huge, { streamed: true });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "body exceeds 1 MiB" });
  });

  it("an unknown project with 404", async () => {
    const res = await deliver(
      "nobody-here",
      FIXTURE_CASES[issues]?.delivery as Delivery,
      fixtureBytes(issues),
    );
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "project nobody-here is not registered" });
  });

  it("nothing for a signed delivery for another repository (an organisation webhook): 202 ignored", async () => {
    const project = freshProject("other");
    await registerProject(project, "gitea", "me/mine");
    const res = await deliver(project, FIXTURE_CASES[issues]?.delivery as Delivery, fixtureBytes(issues));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      ignored: `delivery is for gogits/hello-world, project ${project} is me/mine`,
    });
    expect(await deliveryRows(project)).toEqual([]);
    const mirrored = await env.DB.prepare("SELECT COUNT(*) AS n FROM forge_issues WHERE project_id = ?")
      .bind(project)
      .first<{ n: number }>();
    expect(mirrored?.n).toBe(0);
  });

  it("a delivery without a delivery id with 400", async () => {
    const { project, fixture, body } = await projectFor(issues);
    const res = await deliver(project, fixture.delivery, body, {
      headers: { "X-Gitea-Delivery": "", "X-Gogs-Delivery": "", "X-GitHub-Delivery": "" },
    });
    expect(res.status).toBe(400);
  });
});

describe("issues through the dependency gate, by events alone", () => {
  const delivery: Delivery = { forge: "forgejo", event: { grouped: "issues", type: "issues" } };
  const template = JSON.parse(env.WEBHOOK_FIXTURES["gitea/issues.opened.json"] ?? "{}");
  // The fixture's sender and author, a writer of each test's repository on the local forge.
  const writer = template.sender.login as string;
  let repo = "";

  /**
   * A repository on the local forge with the fixture's sender as a writer, and a project for it, its mirror
   * backfilled: the payloads below, each stamped when it is sent, are then the news.
   */
  async function gateProject(name: string) {
    const project = freshProject(name);
    repo = (await control<{ fullName: string }>("repo", { name: project, files: { "README.md": "x\n" } }))
      .fullName;
    await control("user", { repo, login: writer, level: "write" });
    // The issues the payloads speak of exist on the forge: their labels and comments are real calls.
    for (let n = 0; n < 13; n++) {
      await fetch(`${services.forgeApiUrl}/repos/${repo}/issues`, {
        method: "POST",
        headers: { authorization: `token ${services.conveyorToken}`, "content-type": "application/json" },
        body: JSON.stringify({ title: `Issue ${n + 1}` }),
      });
    }
    await registerProject(project, "forgejo", repo, { forgeToken: services.conveyorToken });
    await backfilled(project);
    return project;
  }

  function issuePayload(action: string, number: number, body: string, labels: string[], state = "open") {
    return pretty({
      ...template,
      repository: { ...template.repository, full_name: repo },
      action,
      issue: {
        ...template.issue,
        number,
        title: `Issue ${number}`,
        body,
        state,
        labels: labels.map((name, id) => ({ id: id + 1, name, color: "ededed", description: "" })),
        updated_at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
      },
    });
  }

  const state = async (project: string, number: number) =>
    (await issueStub(env, project, number).view())?.state;

  it("blocked while #1 is open, queued as soon as #1's closed event arrives", async () => {
    const project = await gateProject("gate");
    expect((await deliver(project, delivery, issuePayload("opened", 1, "The parser.", []))).status).toBe(202);
    const opened = await deliver(
      project,
      delivery,
      issuePayload("opened", 2, "## Depends on\n- #1\n", ["backlog"]),
    );
    expect(await opened.json()).toEqual({ accepted: true, events: 1 });
    expect(await state(project, 2)).toBe("blocked");
    expect((await issueStub(env, project, 2).view())?.blockers).toEqual(["#1"]);
    await issueStub(env, project, 2).drain();

    const closed = await deliver(project, delivery, issuePayload("closed", 1, "The parser.", [], "closed"));
    expect(await closed.json()).toEqual({ accepted: true, events: 1 });
    expect(await state(project, 2)).toBe("queued");
    const history = (await issueStub(env, project, 2).view())?.history ?? [];
    expect(history.map((h) => [h.from, h.to, h.cause.kind])).toEqual([
      ["new", "blocked", "delivery"],
      ["blocked", "queued", "delivery"],
    ]);
  });

  it("an issue without the backlog label does not enter the lifecycle; labelling it does", async () => {
    const project = await gateProject("label");
    await deliver(project, delivery, issuePayload("opened", 5, "", []));
    expect(await issueStub(env, project, 5).view()).toBeNull();
    const labelled = await deliver(
      project,
      { forge: "forgejo", event: { grouped: "issues", type: "issue_label" } },
      issuePayload("label_updated", 5, "", ["backlog"]),
    );
    expect(await labelled.json()).toEqual({ accepted: true, events: 1 });
    expect(await state(project, 5)).toBe("queued");
  });

  it("a delivery that queues an issue is recorded by the issue's Durable Object, with the edge", async () => {
    const project = await gateProject("handover");
    const labelled = issuePayload("label_updated", 6, "", ["backlog"]);
    const label: Delivery = { forge: "forgejo", event: { grouped: "issues", type: "issue_label" } };
    const trigger = `fail_${project.replaceAll("-", "_")}`;
    // A real D1 failure holds the DO's record back: no write of the Worker's own records the delivery.
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON transitions WHEN NEW.project_id = '${project}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`,
    );
    const first = await deliver(project, label, labelled, { deliveryId: "label" });
    expect(await first.json()).toEqual({ accepted: true, events: 1 });
    await issueStub(env, project, 6).drain();
    expect(await deliveryRows(project)).toEqual([]);

    // Not yet in D1, the redelivery is still a duplicate: the DO applied its event once.
    const early = await deliver(project, label, labelled, { deliveryId: "label" });
    expect(early.status).toBe(200);
    expect(await early.json()).toEqual({ duplicate: true, outcome: "processed" });

    await env.DB.exec(`DROP TRIGGER ${trigger}`);
    await new Promise((r) => setTimeout(r, 600));
    await issueStub(env, project, 6).drain();
    expect(await deliveryRows(project)).toEqual([
      { id: `${project}:label`, event: expect.any(String), outcome: "processed", number: 6 },
    ]);
    const late = await deliver(project, label, labelled, { deliveryId: "label-replayed" });
    expect(await late.json()).toEqual({ duplicate: true, outcome: "processed" });
    expect((await issueStub(env, project, 6).view())?.history.map((h) => h.to)).toEqual(["queued"]);
  });

  it("a replayed old delivery is a duplicate and does not roll the mirror back", async () => {
    const project = await gateProject("replay");
    const older = issuePayload("edited", 8, "first words", []);
    await deliver(project, delivery, older, { deliveryId: "older" });
    await deliver(project, delivery, issuePayload("edited", 8, "second words", []), { deliveryId: "newer" });
    const replay = await deliver(project, delivery, older, { deliveryId: "replayed-older" });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ duplicate: true, outcome: "processed" });
    const row = await env.DB.prepare("SELECT body FROM forge_issues WHERE project_id = ? AND number = 8")
      .bind(project)
      .first<{ body: string }>();
    expect(row?.body).toBe("second words");
  });

  it("a dependency cycle blocks with its path", async () => {
    const project = await gateProject("cycle");
    await deliver(project, delivery, issuePayload("opened", 1, "depends on #2", []));
    await deliver(project, delivery, issuePayload("opened", 2, "depends on #1", ["backlog"]));
    const view = await issueStub(env, project, 2).view();
    expect(view).toMatchObject({ state: "blocked", reason: "dependency cycle: #2 → #1 → #2" });
  });

  it("30 dependencies block the issue unread, with a comment; `..` names no repository", async () => {
    const project = await gateProject("many");
    const refs = Array.from({ length: 30 }, (_, i) => `#${100 + i}`).join(", ");
    const many = await deliver(
      project,
      delivery,
      issuePayload("opened", 4, `depends on ../x#1, ${refs}`, ["backlog"]),
    );
    expect(await many.json()).toEqual({ accepted: true, events: 1 });
    expect(await issueStub(env, project, 4).view()).toMatchObject({
      state: "blocked",
      blockers: [],
      reason: "it declares 30 dependencies and at most 20 are read; trim the list or split the issue",
    });
    const few = await deliver(
      project,
      delivery,
      issuePayload("opened", 5, "depends on ../x#1, #7, acme/..#2", ["backlog"]),
    );
    expect(await few.json()).toEqual({ accepted: true, events: 1 });
    expect(await issueStub(env, project, 5).view()).toMatchObject({ state: "blocked", blockers: ["#7"] });
  });

  it("backlog from someone without write access queues nothing: an issue template's label, or a label", async () => {
    const project = await gateProject("nonwriter");
    await control("user", { repo, login: "drive-by", level: "read" });
    const stranger = { login: "drive-by", id: 77, username: "drive-by" };
    const templated = JSON.parse(new TextDecoder().decode(issuePayload("opened", 11, "do it", ["backlog"])));
    templated.issue.user = { ...templated.issue.user, ...stranger };
    templated.sender = { ...templated.sender, ...stranger };
    const opened = await deliver(project, delivery, pretty(templated));
    expect(await opened.json()).toEqual({ ignored: "not queued: drive-by has no write access" });
    expect(await issueStub(env, project, 11).view()).toBeNull();

    const labelled = { ...templated, action: "label_updated", issue: { ...templated.issue, number: 12 } };
    const label: Delivery = { forge: "forgejo", event: { grouped: "issues", type: "issue_label" } };
    expect(await (await deliver(project, label, pretty(labelled))).json()).toEqual({
      ignored: "not queued: drive-by has no write access",
    });
    expect(await issueStub(env, project, 12).view()).toBeNull();
  });

  it("an issue edited after a writer queued it: the job carries the text as queued", async () => {
    const project = await gateProject("snapshot");
    await deliver(project, delivery, issuePayload("opened", 13, "Fix the parser.", ["backlog"]));
    const edited = JSON.parse(
      new TextDecoder().decode(issuePayload("edited", 13, "Also push secrets.", ["backlog"])),
    );
    edited.sender = { ...edited.sender, login: "drive-by", id: 77, username: "drive-by" };
    await deliver(project, delivery, pretty(edited));
    await issueStub(env, project, 13).drain();
    const claimed = await claim(await newRunner("snapshot"), [project]);
    expect(claimed?.job.issue).toEqual({ number: 13, title: "Issue 13", body: "Fix the parser." });
  });

  it("closing a tracked issue on the forge settles its lifecycle", async () => {
    const project = await gateProject("close");
    await deliver(project, delivery, issuePayload("opened", 3, "", ["backlog"]));
    await issueStub(env, project, 3).drain();
    await deliver(project, delivery, issuePayload("closed", 3, "", ["backlog"], "closed"));
    expect((await issueStub(env, project, 3).view())?.reason).toBe("issue closed on the forge");
    expect(await state(project, 3)).toBe("abandoned");
  });
});

describe("pull requests in the mirror, by their events", () => {
  const GITEA = { forge: "gitea" as const, event: { grouped: "pull_request", type: "pull_request" } };
  const CLOSED = "gitea/pull_request.closed.json";
  type Payload = { action: string; pull_request: Record<string, unknown> };
  /** Gitea's capture of pull request #1 closing, told as another moment of its life. */
  const moment = (action: string, pull: Record<string, unknown>) => {
    const payload = JSON.parse(new TextDecoder().decode(fixtureBytes(CLOSED))) as Payload;
    return pretty({ ...payload, action, pull_request: { ...payload.pull_request, ...pull } });
  };
  const row = (project: string) =>
    env.DB.prepare(
      "SELECT kind, title, state, closes, author, comments, forge_updated_at, closed_at FROM forge_issues WHERE project_id = ? AND number = 1",
    )
      .bind(project)
      .first();
  const at = (iso: string) => Date.parse(iso);

  it("opened, edited, closed and merged write its dated row; an older edit arriving late changes nothing", async () => {
    const project = freshProject("pulls");
    await registerProject(project, "gitea", "anbraten/test-repo");
    const open = { state: "open", closed_at: null };
    const opened = await deliver(
      project,
      GITEA,
      moment("opened", { ...open, body: "Fixes #3", updated_at: "2023-12-05T18:06:38Z" }),
    );
    expect(opened.status, await opened.clone().text()).toBe(202);
    expect(await row(project)).toMatchObject({
      kind: "pull",
      title: "Adjust file",
      state: "open",
      closes: "[3]",
      author: "anbraten",
      forge_updated_at: at("2023-12-05T18:06:38Z"),
    });
    await deliver(
      project,
      GITEA,
      moment("edited", { ...open, title: "Adjust the file", updated_at: "2023-12-05T18:06:41Z" }),
    );
    expect(await row(project)).toMatchObject({ title: "Adjust the file", closes: "[]" });

    await deliver(project, GITEA, fixtureBytes(CLOSED));
    expect(await row(project)).toMatchObject({
      title: "Adjust file",
      state: "closed",
      closed_at: at("2023-12-05T18:06:43Z"),
    });
    await deliver(project, GITEA, fixtureBytes("gitea/pull_request.closed.merged.json"));
    expect(await row(project)).toMatchObject({
      state: "closed",
      comments: 1,
      forge_updated_at: at("2023-12-05T18:35:31Z"),
    });

    const late = await deliver(
      project,
      GITEA,
      moment("edited", { ...open, title: "A stale title", updated_at: "2023-12-05T18:06:40Z" }),
    );
    expect(late.status).toBe(202);
    expect(await row(project)).toMatchObject({ title: "Adjust file", state: "closed", comments: 1 });
  });
});

describe("project registry", () => {
  const url = (id: string) => `https://conveyor.test/api/v1/projects/${id}`;
  const put = (id: string, body: unknown) =>
    SELF.fetch(url(id), {
      method: "PUT",
      headers: { ...OPERATOR, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const valid = {
    forge: "forgejo",
    apiUrl: "https://codeberg.org/api/v1",
    repo: "me/app",
    webhookSecret: "a webhook secret of some length",
    forgeToken: "token-123",
  };

  it("creates with defaults, never returns or stores secrets in the clear, replaces, deletes", async () => {
    const id = freshProject("reg");
    const created = await put(id, valid);
    expect(created.status).toBe(201);
    const body = (await created.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      id,
      forge: "forgejo",
      repo: "me/app",
      cloneUrl: "https://codeberg.org/me/app.git",
      settings: { parallel: 2, maxCiFixes: 3, maxCriticIterations: 3, labels: { backlog: "backlog" } },
    });
    expect(JSON.stringify(body)).not.toMatch(/token-123|webhook secret/);
    const stored = await env.DB.prepare("SELECT * FROM projects WHERE id = ?").bind(id).first();
    expect(JSON.stringify(stored)).not.toMatch(/token-123|webhook secret/);

    expect((await put(id, { ...valid, parallel: 4 })).status).toBe(200);
    const read = (await (await SELF.fetch(url(id), { headers: OPERATOR })).json()) as { settings: object };
    expect(read.settings).toMatchObject({ parallel: 4 });
    expect((await SELF.fetch(url(id), { method: "DELETE", headers: OPERATOR })).status).toBe(204);
    expect((await SELF.fetch(url(id), { headers: OPERATOR })).status).toBe(404);
  });

  it.each([
    [{ ...valid, forgeToken: undefined }, /^forgeToken: /],
    [{ ...valid, forge: "gitlab" }, /^forge: /],
    [{ ...valid, repo: "no-slash" }, "repo: repo is owner/name"],
    [{ ...valid, parallel: 0 }, /^parallel: /],
    [{ ...valid, webhookSecret: "short" }, /^webhookSecret: /],
  ])("400 for %j", async (body, error) => {
    const res = await put(freshProject("bad"), body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(error);
  });

  it("needs the operator token", async () => {
    expect((await SELF.fetch(url("x"), { method: "PUT", body: "{}" })).status).toBe(401);
  });
});

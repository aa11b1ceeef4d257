import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { LIVE_REFRESH_HEADER } from "../../src/dashboard/live-script.ts";
import type { ProposedStep } from "../../src/domain/escalation.ts";
import type { LifecycleEvent } from "../../src/domain/lifecycle.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { formFields, ORIGIN, page, post, seedIssue, sessionCookie } from "./dashboard-support.ts";
import { enqueue, issueView } from "./support/jobs.ts";
import { freshProject, registerProject } from "./support/webhooks.ts";

let cookie = "";
beforeAll(async () => {
  cookie = await sessionCookie();
});

const html = async (path: string) => {
  const res = await page(path, cookie);
  expect(res.status, path).toBe(200);
  return res.text();
};

const BASE_TIME = 1_790_000_000_000;

async function insertIssues(project: string, state: string, numbers: number[], at: (n: number) => number) {
  const statements = numbers.flatMap((number) => [
    env.DB.prepare(
      "INSERT INTO issues (project_id, number, state, iteration, seq, updated_at) VALUES (?, ?, ?, 1, 1, ?)",
    ).bind(project, number, state, at(number)),
    env.DB.prepare(
      `INSERT INTO forge_issues (project_id, number, title, body, state, labels, depends_on, updated_at)
       VALUES (?, ?, ?, '', 'open', '[]', '[]', 0)`,
    ).bind(project, number, `Title of ${number}`),
  ]);
  await env.DB.batch(statements);
}

const cardNumbers = (text: string, project: string) =>
  [...text.matchAll(new RegExp(`/dashboard/projects/${project}/issues/(\\d+)"`, "g"))].map((m) =>
    Number(m[1]),
  );

describe("board", () => {
  const project = freshProject("dash-board");
  // 60 queued issues, two per timestamp so paging must break ties by number; 3 running.
  beforeAll(async () => {
    await insertIssues(
      project,
      "queued",
      Array.from({ length: 60 }, (_, i) => i + 1),
      (n) => BASE_TIME + Math.ceil(n / 2) * 1000,
    );
    await insertIssues(project, "running", [101, 102, 103], (n) => BASE_TIME + n);
  });

  it("shows each state's count and its newest issues, linking to the rest", async () => {
    const text = await html(`/dashboard/projects/${project}`);
    const queued = text.slice(text.indexOf(`states/queued"`), text.indexOf(`states/running"`));
    expect(queued).toContain('<span class="count">60</span>');
    expect(cardNumbers(queued, project)).toEqual([60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49]);
    expect(queued).toContain("all 60 →");
    expect(queued).toContain("#60 Title of 60");
    const running = text.slice(text.indexOf(`states/running"`), text.indexOf(`states/awaiting_ci"`));
    expect(cardNumbers(running, project)).toEqual([103, 102, 101]);
  });

  it("pages through a state newest first, without gaps or repeats", async () => {
    const first = await html(`/dashboard/projects/${project}/states/queued`);
    const next = /\?before=(\d+\.\d+)"/.exec(first)?.[1];
    expect(next).toBe(`${BASE_TIME + 6 * 1000}.11`);
    const second = await html(`/dashboard/projects/${project}/states/queued?before=${next}`);
    expect(second).not.toContain("?before=");
    const seen = [...cardNumbers(first, project), ...cardNumbers(second, project)];
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => 60 - i));
  });

  it.each([
    [`/states/sleeping`, "state: "],
    [`/states/queued?before=yesterday`, "cursor is"],
  ])("400 for %s", async (suffix, error) => {
    const res = await page(`/dashboard/projects/${project}${suffix}`, cookie);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(error);
  });
});

describe("issue page", () => {
  const project = freshProject("dash-issue");

  beforeAll(async () => {
    await seedIssue(project, 5, "awaiting_approval");
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO forge_issues (project_id, number, title, body, state, labels, depends_on, updated_at)
         VALUES (?, 5, 'Add the export button', '', 'open', '["backlog"]', '[]', 0)`,
      ).bind(project),
      // The first job's runner is registered as build-host-1; the second's was revoked since.
      env.DB.prepare(
        `INSERT INTO runners (id, name, token_hash, version, created_at, last_seen_at)
         VALUES (?, 'build-host-1', ?, '1.0.0', 0, 0)`,
      ).bind(`${project}-runner`, `hash-${project}`),
      env.DB.prepare(
        `INSERT INTO jobs (id, project_id, number, kind, status, attempt, runner_id, created_at, updated_at)
         VALUES (?, ?, 5, 'implement', 'done', 1, ?, ?, ?), (?, ?, 5, 'revise', 'done', 1, 'runner-gone', ?, ?)`,
      ).bind(
        `${project}.5.job1`,
        project,
        `${project}-runner`,
        BASE_TIME,
        BASE_TIME,
        `${project}.5.job2`,
        project,
        BASE_TIME,
        BASE_TIME,
      ),
      ...[
        [1, 1000, 500, 0, 4000, 0.3],
        [2, 200, 300, 4000, 300, 0.05],
      ].map(([iteration, input, output, read, write, usd]) =>
        env.DB.prepare(
          `INSERT INTO usage (id, project_id, number, iteration, input_tokens, output_tokens, cache_read_tokens,
             cache_write_tokens, usd, turns, at) VALUES (?, ?, 5, ?, ?, ?, ?, ?, ?, 7, ?)`,
        ).bind(`${project}-u${iteration}`, project, iteration, input, output, read, write, usd, BASE_TIME),
      ),
      env.DB.prepare(
        `INSERT INTO critic_reports (id, project_id, number, round, head_sha, verdict, summary, findings, at)
         VALUES (?, ?, 5, 1, 'abc1234', 'APPROVE', 'Touches the workflow file', ?, ?)`,
      ).bind(
        `${project}-r1`,
        project,
        JSON.stringify([{ severity: "minor", file: "a.ts", line: 3, comment: "rename x", inScope: true }]),
        BASE_TIME,
      ),
    ]);
  });

  it("shows the timeline, CI attempts, critic rounds, jobs and usage per iteration with the cache-hit ratio", async () => {
    const text = await html(`/dashboard/projects/${project}/issues/5`);
    expect(text).toContain("<h1>dash-issue");
    expect(text).toContain("Add the export button");
    expect(text).toContain('class="state state-awaiting_approval"');
    for (const event of ["triage", "dispatched", "phase", "review"])
      expect(text).toContain(`<td>${event}</td>`);
    expect(text).toContain('<td>ci<span class="ci-green"> green</span></td>');
    expect(text).toMatch(/CI attempts <span class="count">1<\/span>/);
    expect(text).toContain("Round 1: APPROVE");
    expect(text).toContain("[minor] a.ts:3: rename x");
    expect(text).toContain(`${project}.5.job1`);
    // The Runner column names the runner (its id on hover), or gives the id of one revoked since.
    expect(text).toContain(`<td title="${project}-runner">build-host-1</td>`);
    expect(text).toContain('<td title="runner-gone">runner-gone</td>');
    expect(text).toContain('<svg viewBox="0 0 640 170" role="img" aria-label="Tokens per iteration');
    // Iteration 1 read nothing from the cache; iteration 2 read 4000 of 4500 prompt tokens.
    expect(text).toContain("0% · $0.30");
    expect(text).toContain("89% · $0.05");
    expect(text).toContain('value="approve"');
    expect(text).toContain('value="reject"');
    expect(text).not.toContain('value="retry"');
  });

  it("404 for an issue Conveyor does not know", async () => {
    const res = await page(`/dashboard/projects/${project}/issues/999`, cookie);
    expect(res.status).toBe(404);
  });
});

describe("issue page: the forge, the timeline and live updates", () => {
  const project = freshProject("dash-live");
  const forge = `${inject("services").forgeApiUrl.replace(/\/api\/v1\/?$/, "")}/acme/web`;

  beforeAll(async () => {
    await registerProject(project, "github", "acme/web");
    await seedIssue(project, 6, "awaiting_ci");
    const head = (await issueStub(env, project, 6).view())?.headSha ?? "";
    await send(project, 6, { type: "pr_opened", number: 42, byConveyor: true });
    await send(project, 6, { type: "ci", result: "green", headSha: head });
    await send(project, 6, {
      type: "review",
      verdict: "APPROVE",
      summary: "ok",
      needsHumanApproval: "a .ci/run change",
    });
    // Late and duplicate news the table refuses: recorded, but not what an operator reads first.
    await send(project, 6, { type: "dispatched", jobId: "j-late", runnerId: "r" });
  });

  const send = (p: string, n: number, event: LifecycleEvent) =>
    issueStub(env, p, n).apply({
      id: crypto.randomUUID(),
      project: p,
      number: n,
      cause: { kind: "system", id: "t" },
      event,
    });

  it("links the issue, its pull request, branch and head to the forge's pages", async () => {
    const view = await issueStub(env, project, 6).view();
    const text = await html(`/dashboard/projects/${project}/issues/6`);
    expect(text).toContain(`href="${forge}/issues/6"`);
    expect(text).toContain(`href="${forge}/pull/42"`);
    expect(text).toContain(`href="${forge}/tree/${view?.branch}"`);
    expect(text).toContain(`href="${forge}/commit/${view?.headSha}"`);
  });

  it("writes times to the second with the time since the entry before, and hides rejected events until asked", async () => {
    const text = await html(`/dashboard/projects/${project}/issues/6`);
    expect(text).toMatch(/<td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/td><td>\+\d+ s<\/td>/);
    expect(text).not.toContain('<tr class="rejected">');
    expect(text).toContain("Show the 1 rejected events too");
    const all = await html(`/dashboard/projects/${project}/issues/6?events=all`);
    expect(all).toContain('<tr class="rejected">');
    expect(all).toContain("rejected in awaiting_approval");
  });

  it("opens a live socket only for its own pages, and tells it of every event recorded", async () => {
    const live = `${ORIGIN}/dashboard/projects/${project}/issues/6/live`;
    const upgrade = { cookie, upgrade: "websocket" };
    const foreign = await SELF.fetch(live, { headers: { ...upgrade, origin: "https://evil.test" } });
    expect(foreign.status).toBe(403);
    expect((await SELF.fetch(live, { headers: { cookie, origin: ORIGIN } })).status).toBe(426);
    const anonymous = await SELF.fetch(live, {
      headers: { upgrade: "websocket", origin: ORIGIN },
      redirect: "manual",
    });
    expect(anonymous.status).toBe(303);
    const unknown = live.replace("/issues/6/", "/issues/66/");
    expect((await SELF.fetch(unknown, { headers: { ...upgrade, origin: ORIGIN } })).status).toBe(404);

    const res = await SELF.fetch(live, { headers: { ...upgrade, origin: ORIGIN } });
    expect(res.status).toBe(101);
    const socket = res.webSocket;
    if (!socket) throw new Error("no WebSocket");
    socket.accept();
    type News = Record<string, unknown>;
    const messages: News[] = [];
    // The first message that `matches`, once it came (the socket also hears the outbox move on).
    const heard = (matches: (news: News) => boolean) =>
      new Promise<News>((resolve) => {
        const check = () => {
          const found = messages.find(matches);
          found ? resolve(found) : setTimeout(check, 10);
        };
        check();
      });
    socket.addEventListener("message", (m) => {
      messages.push(JSON.parse(String(m.data)));
    });
    await send(project, 6, { type: "human_approval", by: "alice" });
    expect(await heard((m) => "state" in m)).toMatchObject({ state: "merging" });

    // A session's steps too: the page shows them as they come.
    const at = Date.parse("2026-11-25T05:10:07Z");
    await issueStub(env, project, 6).noteActivity("job-6", [{ at, kind: "tool", text: "Bash npm test" }]);
    expect(await heard((m) => "activity" in m)).toEqual({ activity: 1 });
    // And of the records the ProjectDO keeps of the issue in D1 (its jobs, usage, vault item): a job queued
    // for it, once D1 has its row, is told to the issue's object, which tells the page.
    await enqueue(issueView(project, 6, { state: "revising" }), "revise", `${project}#6:live:0`);
    expect(await heard((m) => "records" in m)).toEqual({ records: ["jobs"] });
    const text = await html(`/dashboard/projects/${project}/issues/6`);
    expect(text).toContain(
      '<li class="activity-tool"><time datetime="2026-11-25T05:10:07.000Z">05:10:07</time>',
    );
    expect(text).toContain("<code>Bash npm test</code>");
    socket.close();
  });
});

describe("approval queue", () => {
  const project = freshProject("dash-approve");

  beforeAll(async () => {
    // Operator actions apply to registered projects only.
    await registerProject(project, "github", "acme/approve");
    await seedIssue(project, 1, "awaiting_approval");
    await seedIssue(project, 2, "escalated");
    await seedIssue(project, 3, "running");
  });

  it("lists protected-path merges and escalations with their buttons", async () => {
    const text = await html("/dashboard/approvals");
    const numbers = cardNumbers(text, project);
    expect(numbers).toEqual([1, 2]);
    const approval = text.slice(text.indexOf(`/projects/${project}/issues/1"`));
    expect(approval.slice(0, approval.indexOf("</li>"))).toMatch(/value="approve".*value="reject"/s);
    const escalated = text.slice(text.indexOf(`/projects/${project}/issues/2"`));
    expect(escalated.slice(0, escalated.indexOf("</li>"))).toMatch(/value="retry".*value="abandon"/s);
  });

  it("approve applies human_approval through the operator path, once per form", async () => {
    const action = `/dashboard/projects/${project}/issues/1/actions`;
    const fields: Record<string, string> = {
      ...formFields(await html("/dashboard/approvals"), action),
      action: "approve",
    };
    const res = await post(action, cookie, fields);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/approvals");
    const view = await issueStub(env, project, 1).view();
    expect(view?.state).toBe("merging");
    expect(view?.history.at(-1)).toMatchObject({
      event: "human_approval",
      outcome: "applied",
      cause: { kind: "operator", id: `dashboard:${fields.key}:approve` },
    });
    const flash = res.headers.get("set-cookie")?.split(";")[0] ?? "";
    // A live page's refresh neither shows the flash nor uses it up: the page the redirect loads does.
    const refresh = await page("/dashboard/approvals", `${cookie}; ${flash}`, { [LIVE_REFRESH_HEADER]: "1" });
    expect(await refresh.text()).not.toContain("is now merging");
    expect(refresh.headers.get("set-cookie")).toBeNull();
    const next = await page("/dashboard/approvals", `${cookie}; ${flash}`);
    expect(await next.text()).toContain(`Approve: ${project}#1 is now merging`);
    expect(next.headers.get("set-cookie")).toMatch(/^conveyor_flash=;/);

    const again = await post(action, cookie, fields);
    expect(again.headers.get("set-cookie")).toContain(encodeURIComponent("was already sent"));
    expect((await issueStub(env, project, 1).view())?.history.length).toBe(view?.history.length);
  });

  it("retry takes an escalated issue back to the queue; a stale action is refused with the table's reason", async () => {
    const action = `/dashboard/projects/${project}/issues/2/actions`;
    const fields = formFields(await html(`/dashboard/projects/${project}/issues/2`), action);
    await post(action, cookie, { ...fields, action: "retry" });
    expect((await issueStub(env, project, 2).view())?.state).toBe("queued");
    const res = await post(action, cookie, { ...fields, action: "approve" });
    expect(decodeURIComponent(res.headers.get("set-cookie") ?? "")).toContain(
      `Approve refused for ${project}#2: human_approval does not apply`,
    );
  });
});

describe("the triage's proposal", () => {
  const project = freshProject("dash-accept");
  const flash = (res: Response) => decodeURIComponent(res.headers.get("set-cookie") ?? "");

  beforeAll(async () => {
    await registerProject(project, "github", "acme/accept");
    await seedIssue(project, 1, "escalated");
    await seedIssue(project, 2, "escalated");
  });

  async function propose(number: number, step: ProposedStep) {
    const stub = issueStub(env, project, number);
    const escalation = (await stub.view())?.escalation?.n ?? 0;
    const proposal = { escalation, runId: "run-1", agent: "triage", diagnosis: "It ran out of turns.", step };
    const event: LifecycleEvent = { type: "triage_proposal", proposal };
    const cause = { kind: "system" as const, id: "test" };
    const result = await stub.apply({ id: `proposal-${number}`, project, number, cause, event });
    expect(result.outcome).toBe("applied");
    await stub.drain();
  }

  it("an Accept beside the proposal carries out its step through the operator path, answered by the flash", async () => {
    const path = `/dashboard/projects/${project}/issues/1`;
    expect(await html(path)).not.toContain('value="accept"');
    await propose(1, { kind: "retry", hint: "Read the parser first." });
    const text = await html(path);
    const shown = text.slice(text.indexOf("Triage&#39;s proposal"));
    expect(shown).toContain("retry with a hint");
    expect(shown).toContain("It ran out of turns.");
    expect(shown).toContain("Read the parser first.");
    const action = `${path}/actions`;
    const fields = formFields(shown, action);
    const res = await post(action, cookie, { ...fields, action: "accept" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(path);
    const view = await issueStub(env, project, 1).view();
    expect(view?.state).toBe("queued");
    expect(view?.history.at(-1)).toMatchObject({
      event: "accept",
      outcome: "applied",
      cause: { kind: "operator", id: `dashboard:${fields.key}:accept` },
    });
    expect(flash(res)).toContain(`Accept: ${project}#1 is now queued`);
    // The proposal is spent: no Accept is offered, and the same form again changes nothing.
    expect(await html(path)).not.toContain('value="accept"');
    const again = await post(action, cookie, { ...fields, action: "accept" });
    expect(flash(again)).toContain("was already sent");
    expect((await issueStub(env, project, 1).view())?.history.length).toBe(view?.history.length);
  });

  it("a proposal the issue has left is shown without Accept, and an Accept sent anyway is refused with the table's reason", async () => {
    const path = `/dashboard/projects/${project}/issues/2`;
    await propose(2, { kind: "abandon" });
    const action = `${path}/actions`;
    const fields = formFields(await html(path), action);
    await post(action, cookie, { ...fields, action: "retry" });
    expect((await issueStub(env, project, 2).view())?.state).toBe("queued");
    const text = await html(path);
    expect(text).not.toContain('value="accept"');
    const left = "the issue is queued: the triage proposal was for an escalation it has left";
    expect(text).toContain(`Not to accept now: ${left}.`);
    const res = await post(action, cookie, { ...fields, key: crypto.randomUUID(), action: "accept" });
    expect(flash(res)).toContain(`Accept refused for ${project}#2: ${left}`);
    expect((await issueStub(env, project, 2).view())?.state).toBe("queued");
  });
});

describe("runners and cost", () => {
  it("shows each runner's version, last seen, disk use, memory, load and current jobs", async () => {
    const project = freshProject("dash-runner");
    const runner = `runner-${project}`;
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO runners (id, name, token_hash, version, created_at, last_seen_at, disk_bytes, worktrees,
           disk_free_bytes, mem_available_bytes, mem_total_bytes, load1, cpus, host_at)
         VALUES (?, ?, ?, '9.9.9', 0, ?, ?, 3, ?, ?, ?, 1.5, 4, 0)`,
      ).bind(
        runner,
        `host-${project}`,
        `hash-${project}`,
        Date.now() - 120_000,
        1536 * 1024 * 1024,
        20 * 1024 ** 3,
        2 * 1024 ** 3,
        16 * 1024 ** 3,
      ),
      env.DB.prepare(
        `INSERT INTO jobs (id, project_id, number, kind, status, attempt, runner_id, created_at, updated_at)
         VALUES (?, ?, 8, 'revise', 'leased', 2, ?, 0, 0)`,
      ).bind(`${project}.8.j`, project, runner),
    ]);
    const text = await html("/dashboard/runners");
    const row = text.slice(text.indexOf(`host-${project}`));
    expect(row.slice(0, row.indexOf("</tr>"))).toMatch(
      new RegExp(
        `9\\.9\\.9.*2 min ago.*1\\.5 GiB, 3 worktrees.*20 GiB free.*2\\.0 GiB of 16 GiB free.*load 1\\.5 on 4 CPUs.*${project}#8</a> revise \\(attempt 2\\)`,
        "s",
      ),
    );
  });

  it("charts each project's daily cost over the last 30 days", async () => {
    const project = freshProject("dash-cost");
    const now = Date.now();
    await insertIssues(project, "running", [1], () => now);
    await env.DB.batch(
      [
        [now, 1.25],
        [now - 86_400_000, 0.5],
        [now - 40 * 86_400_000, 99],
      ].map(([at, usd], i) =>
        env.DB.prepare(
          `INSERT INTO usage (id, project_id, number, iteration, input_tokens, output_tokens, cache_read_tokens,
             cache_write_tokens, usd, at) VALUES (?, ?, 1, 1, 0, 0, 0, 0, ?, ?)`,
        ).bind(`${project}-${i}`, project, usd, at),
      ),
    );
    const text = await html("/dashboard");
    const section = text.slice(text.indexOf(`href="/dashboard/projects/${project}"`));
    const chart = section.slice(0, section.indexOf("</figure>"));
    expect(chart).toContain("USD per day (UTC), last 30 days: $1.75");
    expect(chart.match(/<rect /g)).toHaveLength(30);
    expect(chart).toContain(`${new Date(now).toISOString().slice(5, 10)} · USD: $1.25`);
  });
});

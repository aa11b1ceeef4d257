/**
 * Agent runs end to end in the Worker: the catalog read from the repository on the local forge, a manual run
 * queued as an `agent` job, a runner's completion with requested outputs, the checks, and the accepted
 * outputs applied on the forge exactly once.
 */
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseDependencies } from "../../src/domain/dependencies.ts";
import { projectStub } from "../../src/project-stub.ts";
import { toMirrored } from "../../src/projects/gate.ts";
import { mirrorIssue } from "../../src/projects/mirror.ts";
import { loadProject } from "../../src/projects/store.ts";
import { projectCosts } from "../../src/usage/cost.ts";
import { page, sessionCookie } from "./dashboard-support.ts";
import {
  call,
  claim,
  complete,
  drain,
  newRunner,
  seedForgeIssue,
  seedProject,
  taken,
  triaged,
} from "./support/jobs.ts";
import { control, type Loop, loopProject } from "./support/review.ts";
import { freshProject, OPERATOR } from "./support/webhooks.ts";

const BASE = "https://conveyor.test/api/v1/projects";

const api = (path: string, init: RequestInit = {}) =>
  SELF.fetch(`${BASE}/${path}`, { ...init, headers: { ...OPERATOR, ...init.headers } });

/** A repository agent that may comment twice and label `unclear`. */
const TRIAGER = `---
description: Comments on issues, at most twice a run.
schedule: "@weekly"
outputs:
  comment: { max: 2 }
  add_labels: { max: 2, allowedLabels: [unclear] }
---
Comment on the issues.
`;

/** A repository agent that links issues. */
const LINKER = `---
description: Links issues that need others first.
schedule: "@weekly"
outputs:
  link_dependency: { max: 2 }
---
Link the issues.
`;

const BROKEN = `---
description: A misspelt constraint must not silently allow more.
schedule: "@weekly"
outputs:
  comment: { maxx: 100 }
---
Comment.
`;

async function agentsProject(name: string, settings: object = {}): Promise<Loop & { issues: number[] }> {
  const loop = await loopProject(name, settings);
  await control("push", {
    repo: loop.repo,
    branch: "main",
    files: { ".conveyor/agents/triager.md": TRIAGER, ".conveyor/agents/broken.md": BROKEN },
  });
  const project = await loadProject(env, loop.project);
  if (!project) throw new Error("not registered");
  const issues: number[] = [];
  for (const title of ["Add a <script> flag", "Export as CSV"]) {
    const { number } = await loop.forge.createIssue({ title, body: "Please.", labels: [] });
    await mirrorIssue(env, loop.project, toMirrored(project, await loop.forge.getIssue(number)));
    issues.push(number);
  }
  return { ...loop, issues };
}

async function startRun(project: string, agent: string) {
  const res = await api(`${project}/agents/${agent}/runs`, { method: "POST" });
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

const runOf = async (project: string, agent: string, id: string) => {
  const res = await api(`${project}/agents/${agent}/runs/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as {
    status: string;
    costUsd: number;
    decisions:
      | { status: string; reason?: string; applied?: boolean; failed?: string; output: { type: string } }[]
      | null;
  };
};

const usage = {
  inputTokens: 100,
  outputTokens: 10,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  usd: 0.25,
  turns: 3,
};

describe("agents", () => {
  it("lists built-ins and repository agents, and reports a malformed definition without stopping the others", async () => {
    const loop = await agentsProject("agents-list");
    const res = await api(`${loop.project}/agents`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      agents: { name: string; source: string; enabled: boolean; schedule: string | null }[];
      problems: { name: string; source: string; error: string }[];
    };
    expect(body.agents.map((a) => a.name)).toEqual(expect.arrayContaining(["gardener", "triager"]));
    expect(body.agents.find((a) => a.name === "gardener")).toMatchObject({
      source: "builtin",
      schedule: "0 5 * * *",
      enabled: true,
    });
    expect(body.agents.find((a) => a.name === "triager")?.source).toBe("repository");
    expect(body.agents.some((a) => a.name === "broken")).toBe(false);
    expect(body.problems).toEqual([
      { name: "broken", source: "repository", error: expect.stringContaining("maxx") },
    ]);
    const refused = await api(`${loop.project}/agents/broken/runs`, { method: "POST" });
    expect(refused.status).toBe(409);

    // A repository file of a built-in's name replaces it: here, to disable it.
    await control("push", {
      repo: loop.repo,
      branch: "main",
      files: {
        ".conveyor/agents/gardener.md":
          '---\ndescription: Not here.\nschedule: "@daily"\nenabled: false\n---\nNo.\n',
      },
    });
    const overridden = (await (await api(`${loop.project}/agents`)).json()) as typeof body;
    expect(overridden.agents.find((a) => a.name === "gardener")).toMatchObject({
      source: "repository",
      enabled: false,
      schedule: "@daily",
    });
    const disabled = await api(`${loop.project}/agents/gardener/runs`, { method: "POST" });
    expect(disabled.status).toBe(409);
    expect(((await disabled.json()) as { error: string }).error).toBe("agent gardener is disabled");
    expect((await api(`${loop.project}/agents/nobody/runs`, { method: "POST" })).status).toBe(404);

    // A repository that cannot be read: the reason, not a crash.
    const unreadable = freshProject("agents-unreadable");
    await seedProject(unreadable);
    const res502 = await api(`${unreadable}/agents`);
    expect(res502.status).toBe(502);
    expect(((await res502.json()) as { error: string }).error).toMatch(
      /^cannot read the agents from the repository/,
    );
  });

  it("applies exactly `max` outputs once, rejects the rest and undeclared types with reasons, and counts the cost", async () => {
    // The issues' author (Conveyor's account here) may be mentioned on them, and one listed login anywhere.
    const loop = await agentsProject("agents-run", { mentions: { allow: ["helper"], issueAuthor: true } });
    const [first = 0, second = 0] = loop.issues;
    const GONE = 9_999;
    await seedForgeIssue(loop.project, GONE, "Deleted on the forge", "");
    // Lifecycle edges D1 recorded: the last week's reach the prompt as recent activity, older ones do not.
    const edge = (number: number, to: string, reason: string, at: number) =>
      env.DB.prepare(
        "INSERT INTO transitions (project_id, number, seq, from_state, to_state, event, event_id, cause_kind, cause_id, outcome, reason, at) VALUES (?, ?, 1, 'running', ?, 'phase', ?, 'system', 'test', 'applied', ?, ?)",
      )
        .bind(loop.project, number, to, `e-${number}`, reason, at)
        .run();
    await edge(first, "escalated", "Needs <b>a</b> decision", Date.now() - 60_000);
    await edge(second, "abandoned", "Long ago", Date.now() - 8 * 24 * 60 * 60_000);
    const runId = await startRun(loop.project, "triager");
    expect((await runOf(loop.project, "triager", runId)).status).toBe("queued");

    const runner = await newRunner("agents-run-0");
    const claimed = taken(await claim(runner, [loop.project]));
    expect(claimed.job.kind).toBe("agent");
    expect(claimed.job.agent).toMatchObject({ runId, name: "triager", outputs: ["comment", "add_labels"] });
    // The issues' text reaches the prompt as data: escaped inside its tag.
    expect(claimed.job.agent?.prompt).toContain("Add a &lt;script&gt; flag");
    const prompt = claimed.job.agent?.prompt ?? "";
    const activity = prompt.slice(prompt.indexOf("<recent-activity>"), prompt.indexOf("</recent-activity>"));
    expect(activity).toContain(`"number":${first},"from":"running","to":"escalated"`);
    expect(activity).toContain("Needs &lt;b&gt;a&lt;/b&gt; decision");
    expect(activity).not.toContain("Long ago");
    expect((await runOf(loop.project, "triager", runId)).status).toBe("running");

    const outputs = [
      { type: "comment", issue: first, body: "Which flag?" },
      { type: "comment", issue: second, body: "Which columns? @conveyor @helper @stranger" },
      { type: "comment", issue: first, body: "Over the cap." },
      { type: "create_issue", title: "Not declared", body: "No." },
      // Open in Conveyor's mirror, gone from the forge: refused there for good, holding up nothing after it.
      { type: "add_labels", issue: GONE, labels: ["unclear"] },
      { type: "add_labels", issue: second, labels: ["unclear"] },
    ];
    const done = { phase: "done", sessionId: "sess-agent", outputs, usage };
    expect((await complete(runner, claimed, done)).status).toBe(204);
    // Delivered twice (a lost answer): applied once.
    expect((await complete(runner, claimed, done)).status).toBe(204);
    await drain(loop.project);
    await drain(loop.project);

    const run = await runOf(loop.project, "triager", runId);
    expect(run.status).toBe("done");
    expect(run.costUsd).toBe(0.25);
    expect(
      run.decisions?.map((d) => [d.output.type, d.status, d.reason ?? null, d.applied ?? false]),
    ).toEqual([
      ["comment", "accepted", null, true],
      ["comment", "accepted", null, true],
      ["comment", "rejected", "over the cap: at most 2 comment per run", false],
      ["create_issue", "rejected", "create_issue is not among this agent's outputs", false],
      ["add_labels", "accepted", null, false],
      ["add_labels", "accepted", null, true],
    ]);
    expect(run.decisions?.[4]?.failed).toMatch(/^the forge refused it: .*404/);
    const comments = [...(await loop.forge.listComments(first)), ...(await loop.forge.listComments(second))];
    // Each under the agent's and the run's name, quoted apart.
    const attribution = `The agent \`triager\` (run \`${runId}\`) wrote:`;
    expect(comments.map((c) => c.body.split("\n").slice(0, 3))).toEqual([
      [attribution, "", "> Which flag?"],
      [attribution, "", "> Which columns? @conveyor @helper `@stranger`"],
    ]);
    expect((await loop.forge.getIssue(second)).labels).toContain("unclear");
    expect((await projectStub(env, loop.project).dispatchStatus()).spentTodayUsd).toBe(0.25);
    // In D1 too: the project's spend includes the run's (a re-sent figure replaced, not added).
    expect((await projectCosts(env)).get(loop.project)).toEqual({ totalUsd: 0.25, todayUsd: 0.25 });

    // The check and an apply delivered again (their acknowledgements lost): nothing more on the forge.
    await runInDurableObject(projectStub(env, loop.project), (_instance, state) => {
      state.storage.sql.exec(
        "INSERT INTO outbox (channel, payload, next_at) VALUES ('agent-check', ?, 0), ('agent-apply', ?, 0)",
        JSON.stringify({ runId }),
        JSON.stringify({ runId, index: 0 }),
      );
    });
    await drain(loop.project);
    expect((await loop.forge.listComments(first)).map((c) => c.body.split("\n")[2])).toEqual([
      "> Which flag?",
    ]);
    expect((await runOf(loop.project, "triager", runId)).decisions).toEqual(run.decisions);

    const list = (await (await api(`${loop.project}/agents`)).json()) as {
      agents: { name: string; lastRun: { id: string } | null }[];
    };
    expect(list.agents.find((a) => a.name === "triager")?.lastRun?.id).toBe(runId);

    // The dashboard: the project's agents, and the agent's runs with each output's outcome.
    const cookie = await sessionCookie();
    const agentsHtml = await (await page(`/dashboard/projects/${loop.project}/agents`, cookie)).text();
    expect(agentsHtml).toContain(`href="/dashboard/projects/${loop.project}/agents/triager"`);
    expect(agentsHtml).toContain("broken (repository) does not run");
    const runsHtml = await (await page(`/dashboard/projects/${loop.project}/agents/triager`, cookie)).text();
    expect(runsHtml).toContain(runId);
    expect(runsHtml).toContain(`comment on #${first} — applied`);
    expect(runsHtml).toContain("rejected: over the cap: at most 2 comment per run");
    expect(runsHtml).toContain(`add labels unclear on #${GONE} — failed: the forge refused it`);
  });

  it("link_dependency adds a `Depends on` line the dependency parser reads, once", async () => {
    const loop = await agentsProject("agents-link");
    const [first = 0, second = 0] = loop.issues;
    await control("push", {
      repo: loop.repo,
      branch: "main",
      files: { ".conveyor/agents/linker.md": LINKER },
    });
    const runner = await newRunner("agents-link-0");
    const link = { type: "link_dependency", issue: first, dependsOn: second };
    // Two runs ask for the same link: the second finds the line and edits nothing.
    for (const attempt of [0, 1]) {
      const runId = await startRun(loop.project, "linker");
      const claimed = taken(await claim(runner, [loop.project]));
      const done = { phase: "done", sessionId: `sess-link-${attempt}`, outputs: [link], usage };
      expect((await complete(runner, claimed, done)).status).toBe(204);
      await drain(loop.project);
      await drain(loop.project);
      const run = await runOf(loop.project, "linker", runId);
      expect(run.decisions?.map((d) => [d.status, d.applied ?? false])).toEqual([["accepted", true]]);
    }
    const { body } = await loop.forge.getIssue(first);
    expect(body).toBe(`Please.\n\nDepends on #${second}\n`);
    expect(parseDependencies(body)).toEqual([{ repo: null, number: second }]);
  });

  it("an agent run holds no issue slot, and a failed run is recorded as failed", async () => {
    const loop = await agentsProject("agents-fail", { parallel: 1 });
    // The project's one slot is taken by an issue's session.
    await triaged(loop.project, loop.issues[0] ?? 0);
    const busy = taken(await claim(await newRunner("agents-fail-busy"), [loop.project]));
    expect(busy.job.kind).toBe("implement");
    const runId = await startRun(loop.project, "triager");
    const runner = await newRunner("agents-fail-0");
    const first = taken(await claim(runner, [loop.project]));
    expect(first.job.kind).toBe("agent");
    expect(first.job.issue.number).toBe(0);
    // A retryable failure: the run waits for a runner again.
    const retry = { leaseToken: first.leaseToken, error: "the runner lost its network", retryable: true };
    expect((await call(runner, `jobs/${first.job.id}/fail`, retry)).status).toBe(204);
    expect((await runOf(loop.project, "triager", runId)).status).toBe("queued");
    const claimed = taken(await claim(runner, [loop.project]));
    expect(claimed.job).toMatchObject({ id: first.job.id, attempt: 2 });
    const res = await complete(runner, claimed, { phase: "failed", reason: "the model refused" });
    expect(res.status).toBe(204);
    await drain(loop.project);
    const run = await runOf(loop.project, "triager", runId);
    expect(run.status).toBe("failed");
    expect(run.decisions).toBeNull();
  });

  it("a scheduled agent runs once however many of its times passed, and not again while that run waits", async () => {
    const loop = await agentsProject("agents-schedule");
    const stub = projectStub(env, loop.project);
    // The first look starts each scheduled agent at its next time: nothing runs yet.
    expect(await stub.checkAgentSchedules(loop.project)).toEqual({ queued: [] });
    const list = (await (await api(`${loop.project}/agents`)).json()) as {
      agents: { name: string; schedule: string | null; enabled: boolean }[];
    };
    const scheduled = list.agents.filter((a) => a.schedule && a.enabled).map((a) => a.name);
    expect(scheduled).toEqual(expect.arrayContaining(["gardener", "triager"]));

    // Their last runs long ago: every time since then passed unrun.
    const longAgo = () =>
      runInDurableObject(stub, (_instance, state) => {
        state.storage.sql.exec("UPDATE agent_schedule SET last = 0");
      });
    await longAgo();
    const due = await stub.checkAgentSchedules(loop.project);
    expect(due && "queued" in due ? due.queued.sort() : due).toEqual([...scheduled].sort());
    const jobs = await projectStub(env, loop.project).jobs();
    expect(jobs.filter((job) => job.kind === "agent")).toHaveLength(scheduled.length);

    // More times pass while no runner takes those runs: none more is queued.
    await longAgo();
    expect(await stub.checkAgentSchedules(loop.project)).toEqual({ queued: [] });
    expect((await projectStub(env, loop.project).jobs()).filter((job) => job.kind === "agent")).toHaveLength(
      scheduled.length,
    );
  });

  it("forgets finished runs after the retention, but never an agent's last run", async () => {
    const loop = await agentsProject("agents-retention");
    const stub = projectStub(env, loop.project);
    const old = [await startRun(loop.project, "triager"), await startRun(loop.project, "triager")];
    const gardener = await startRun(loop.project, "gardener");
    const DAY = 86_400_000;
    await runInDurableObject(stub, (_instance, state) => {
      // Finished, long ago; the older triager run older still.
      state.storage.sql.exec("UPDATE agent_runs SET status = 'done', created_at = ? WHERE id = ?", 1, old[0]);
      state.storage.sql.exec("UPDATE agent_runs SET status = 'done', created_at = ? WHERE id = ?", 2, old[1]);
      state.storage.sql.exec(
        "UPDATE agent_runs SET status = 'failed', created_at = ? WHERE id = ?",
        1,
        gardener,
      );
    });
    // Still waiting, however old: kept.
    const waiting = await startRun(loop.project, "planner");
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE agent_runs SET created_at = ? WHERE id = ?",
        Date.now() - 60 * DAY,
        waiting,
      );
    });
    await startRun(loop.project, "predictor");
    const kept = async (id: string) => (await stub.agentRun(id)) !== null;
    expect(await kept(old[0] ?? "")).toBe(false);
    // Each agent's latest stays: its "last run".
    expect(await kept(old[1] ?? "")).toBe(true);
    expect(await kept(gardener)).toBe(true);
    expect(await kept(waiting)).toBe(true);
  });
});

/**
 * Forge-event triggers: a repository agent whose `on` names a webhook event runs once per delivery, with the
 * event's issue in its prompt as data; not again for a redelivery, not for an event it does not list, and
 * not for an event of Conveyor's own account (test/worker/event-runs.test.ts: rates, budgets, replays).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { projectStub } from "../../src/project-stub.ts";
import type { Delivery } from "../support/webhook-headers.ts";
import { claim, newRunner, taken } from "./support/jobs.ts";
import { control, loopProject } from "./support/review.ts";
import { deliver, pretty } from "./support/webhooks.ts";

const WELCOMER = `---
description: Welcomes each new issue.
on: [issues.opened]
outputs:
  comment: { max: 1 }
---
Welcome the issue's author.
`;

const ISSUES: Delivery = { forge: "forgejo", event: { grouped: "issues", type: "issues" } };
const template = JSON.parse(env.WEBHOOK_FIXTURES["gitea/issues.opened.json"] ?? "{}");
const PUSH: Delivery = { forge: "forgejo", event: { grouped: "push", type: "push" } };
const pushTemplate = JSON.parse(env.WEBHOOK_FIXTURES["gitea/push.json"] ?? "{}");

function pushPayload(repo: string, ref: string, modified: string[]) {
  const [commit] = pushTemplate.commits;
  return pretty({
    ...pushTemplate,
    ref,
    repository: { ...pushTemplate.repository, full_name: repo },
    commits: [{ ...commit, added: [], removed: [], modified }],
  });
}

function issuePayload(repo: string, action: string, number: number, sender: string) {
  const user = { ...template.sender, login: sender, username: sender };
  return pretty({
    ...template,
    repository: { ...template.repository, full_name: repo },
    action,
    issue: { ...template.issue, number, title: "Crash on <start>", body: "It crashes.", labels: [] },
    sender: user,
  });
}

describe("agents on forge events", () => {
  it("an issues.opened webhook runs the agent once, with the issue as data; a redelivery, another event and Conveyor's own event run nothing", async () => {
    const loop = await loopProject("agent-events");
    await control("push", {
      repo: loop.repo,
      branch: "main",
      files: { ".conveyor/agents/welcomer.md": WELCOMER },
    });
    const { number } = await loop.forge.createIssue({
      title: "Crash on <start>",
      body: "It crashes.",
      labels: [],
    });
    const stub = projectStub(env, loop.project);
    const triggers = async () => (await stub.recentAgentRuns("welcomer")).map((r) => r.trigger);

    const deliveryId = crypto.randomUUID();
    const payload = issuePayload(loop.repo, "opened", number, "someone");
    expect((await deliver(loop.project, ISSUES, payload, { deliveryId })).status).toBe(202);
    expect(await triggers()).toEqual([`issues.opened #${number}`]);
    // The forge sends it again (a lost answer, a manual redelivery): the same run, nothing new.
    await deliver(loop.project, ISSUES, payload, { deliveryId });
    expect(await triggers()).toHaveLength(1);

    // An event the agent does not list.
    await deliver(loop.project, ISSUES, issuePayload(loop.repo, "closed", number, "someone"));
    // Conveyor's own account opened it (an agent's create_issue): no loop.
    const own = await loop.forge.getAuthenticatedUser();
    await deliver(loop.project, ISSUES, issuePayload(loop.repo, "opened", number, own));
    expect(await triggers()).toHaveLength(1);

    const runner = await newRunner("agent-events-0");
    const claimed = taken(await claim(runner, [loop.project]));
    expect(claimed.job.agent).toMatchObject({ name: "welcomer", outputs: ["comment"] });
    expect(claimed.job.agent?.prompt).toContain("Trigger: issues.opened #");
    // The issue's text is data: escaped inside its tag.
    expect(claimed.job.agent?.prompt).toContain("<event>");
    expect(claimed.job.agent?.prompt).toContain("Crash on &lt;start&gt;");
  });

  it("reads the catalog from its cache, and again after a push to the default branch changed the agents", async () => {
    const loop = await loopProject("agent-events-push");
    const files = (on: string) => ({ ".conveyor/agents/welcomer.md": WELCOMER.replace("issues.opened", on) });
    await control("push", { repo: loop.repo, branch: "main", files: files("issues.opened") });
    const stub = projectStub(env, loop.project);
    // Each a new issue's: the same delivery twice would start its run once.
    const opened = async () => {
      const { number } = await loop.forge.createIssue({ title: "Slow", body: "It is slow.", labels: [] });
      return deliver(loop.project, ISSUES, issuePayload(loop.repo, "opened", number, "someone"));
    };
    await opened();
    expect(await stub.recentAgentRuns("welcomer")).toHaveLength(1);

    // The definition changes on the forge; no push webhook came: the cached catalog still answers.
    await control("push", { repo: loop.repo, branch: "main", files: files("issues.labeled") });
    await opened();
    expect(await stub.recentAgentRuns("welcomer")).toHaveLength(2);

    // A push to another branch, or one that changed no agent, keeps the cache.
    const push = (ref: string, modified: string[]) =>
      deliver(loop.project, PUSH, pushPayload(loop.repo, ref, modified));
    expect((await push("refs/heads/feature", [".conveyor/agents/welcomer.md"])).status).toBe(202);
    expect((await push("refs/heads/main", ["README.md"])).status).toBe(202);
    await opened();
    expect(await stub.recentAgentRuns("welcomer")).toHaveLength(3);
    // The push that changed it: the next event reads the new definition, which no longer lists the event.
    expect((await push("refs/heads/main", [".conveyor/agents/welcomer.md"])).status).toBe(202);
    await opened();
    expect(await stub.recentAgentRuns("welcomer")).toHaveLength(3);
  });
});

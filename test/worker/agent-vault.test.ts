/**
 * An agent's dangerous outputs go through the vault: the ProjectDO's real storage and alarm, D1, the local
 * forge, and the Messages-API stand-in as the classifier. A held output is applied once on approval, and
 * recorded rejected with the vault's reason on a rejection or an expiry.
 */
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { projectStub } from "../../src/project-stub.ts";
import { toMirrored } from "../../src/projects/gate.ts";
import { mirrorIssue } from "../../src/projects/mirror.ts";
import { loadProject } from "../../src/projects/store.ts";
import type { VaultItemView } from "../../src/vault/queries.ts";
import { page, sessionCookie } from "./dashboard-support.ts";
import { claim, complete, drain, newRunner, taken } from "./support/jobs.ts";
import { control, type Loop, loopProject } from "./support/review.ts";
import { expireOnAlarm } from "./support/vault.ts";
import { OPERATOR } from "./support/webhooks.ts";

/** Closing an issue is dangerous for this agent; commenting is not. */
const CLOSER = `---
description: Closes issues nobody needs, with a human's approval.
schedule: "@weekly"
outputs:
  comment: { max: 1 }
  close_issue: { max: 1, dangerous: true }
---
Close the stale issues.
`;

const api = (path: string, init: RequestInit = {}) =>
  SELF.fetch(`https://conveyor.test/api/v1/projects/${path}`, {
    ...init,
    headers: { ...OPERATOR, "content-type": "application/json" },
  });

type Decision = {
  status: string;
  reason?: string;
  applied?: boolean;
  vault?: string;
  output: { type: string };
};
const runOf = async (project: string, id: string) => {
  const res = await api(`${project}/agents/closer/runs/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { status: string; decisions: Decision[] | null };
};

/** A project with the closer agent and an open issue; the closer's run asked to comment on it and close it. */
async function heldClose(name: string, settings: object = {}) {
  const loop: Loop = await loopProject(name, settings);
  await control("push", { repo: loop.repo, branch: "main", files: { ".conveyor/agents/closer.md": CLOSER } });
  // The classifier asks a human.
  await control("critic", {
    key: `${loop.repo}#vault`,
    answers: [{ report: { verdict: "ask", reason: "closing an issue ends its discussion" } }],
  });
  const project = await loadProject(env, loop.project);
  if (!project) throw new Error("not registered");
  const { number } = await loop.forge.createIssue({ title: "An old idea", body: "Maybe.", labels: [] });
  await mirrorIssue(env, loop.project, toMirrored(project, await loop.forge.getIssue(number)));
  const started = await api(`${loop.project}/agents/closer/runs`, { method: "POST" });
  expect(started.status).toBe(202);
  const { runId } = (await started.json()) as { runId: string };
  const runner = await newRunner(`${name}-0`);
  const claimed = taken(await claim(runner, [loop.project]));
  const outputs = [
    { type: "comment", issue: number, body: "Nobody has asked for this in a year." },
    { type: "close_issue", issue: number, reason: "Stale." },
  ];
  expect((await complete(runner, claimed, { phase: "done", sessionId: "sess-closer", outputs })).status).toBe(
    204,
  );
  await drain(loop.project);
  await drain(loop.project);
  const run = await runOf(loop.project, runId);
  const itemId = run.decisions?.[1]?.vault ?? "";
  return { loop, number, runId, itemId, run };
}

const closed = async (loop: Loop, number: number) => (await loop.forge.getIssue(number)).state === "closed";
/** The comments on the issue: the first line of the agent's words in each. */
const notes = async (loop: Loop, number: number) =>
  // The agent's words, quoted under its name.
  (await loop.forge.listComments(number)).map((c) =>
    c.body
      .split("\n")
      .find((line) => line.startsWith("> "))
      ?.slice(2),
  );

describe("an agent's dangerous outputs", () => {
  it("wait in the vault, pending, with nothing on the forge; the other outputs are applied", async () => {
    const { loop, number, runId, itemId, run } = await heldClose("agent-vault-held");
    expect(itemId).toBe("v1");
    expect(run.decisions?.map((d) => [d.output.type, d.status, d.applied ?? false, d.vault ?? null])).toEqual(
      [
        ["comment", "accepted", true, null],
        ["close_issue", "accepted", false, "v1"],
      ],
    );
    expect(await closed(loop, number)).toBe(false);
    expect(await notes(loop, number)).toEqual(["Nobody has asked for this in a year."]);
    // An apply row for it (a stray redelivery) applies nothing while its item has not fired.
    await runInDurableObject(projectStub(env, loop.project), (_instance, state) => {
      state.storage.sql.exec(
        "INSERT INTO outbox (channel, payload, next_at) VALUES ('agent-apply', ?, 0)",
        JSON.stringify({ runId, index: 1 }),
      );
    });
    await drain(loop.project);
    expect(await closed(loop, number)).toBe(false);

    const listed = (await (await api(`${loop.project}/vault`)).json()) as { items: VaultItemView[] };
    expect(listed.items).toHaveLength(1);
    expect(listed.items[0]).toMatchObject({
      id: "v1",
      kind: "agent_output",
      state: "pending",
      requester: { type: "agent_run", runId, output: 1 },
      title: `closer (run ${runId}) asks to close #${number}`,
      payload: { agent: "closer", runId, output: { type: "close_issue", issue: number, reason: "Stale." } },
      verdict: { verdict: "ask" },
    });
    const cookie = await sessionCookie();
    const html = await (await page(`/dashboard/projects/${loop.project}/agents/closer`, cookie)).text();
    expect(html).toContain(`close #${number} — waiting in the vault (v1)`);
  });

  it("approved by the operator, is applied once however often the approval is sent, and the item fires", async () => {
    const { loop, number, runId, itemId } = await heldClose("agent-vault-approve");
    const approve = () => api(`${loop.project}/vault/${itemId}/approve`, { method: "POST", body: "{}" });
    const [first, second] = await Promise.all([approve(), approve()]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    await drain(loop.project);
    await drain(loop.project);
    expect(await closed(loop, number)).toBe(true);
    expect(await notes(loop, number)).toEqual(["Nobody has asked for this in a year.", "Stale."]);
    const item = await projectStub(env, loop.project).vaultItem(itemId);
    expect(item?.state).toBe("fired");
    expect(item?.audit.map((e) => [e.action, e.by])).toEqual([
      ["requested", `agent run ${runId} (output 1)`],
      ["classified", "policy"],
      ["approved", "operator"],
      ["fired", "operator"],
    ]);
    const run = await runOf(loop.project, runId);
    expect(run.decisions?.[1]).toMatchObject({ status: "accepted", applied: true, vault: itemId });
    // Later approvals are refused: the item fired.
    expect((await approve()).status).toBe(409);
    await drain(loop.project);
    expect(await notes(loop, number)).toHaveLength(2);
  });

  it("rejected, is recorded rejected with the vault's reason, and nothing reaches the forge", async () => {
    const { loop, number, runId, itemId } = await heldClose("agent-vault-reject");
    const res = await api(`${loop.project}/vault/${itemId}/reject`, {
      method: "POST",
      body: JSON.stringify({ reason: "people still ask for it" }),
    });
    expect(res.status).toBe(200);
    await drain(loop.project);
    const run = await runOf(loop.project, runId);
    expect(run.decisions?.[1]).toMatchObject({
      status: "rejected",
      reason: `the vault rejected it (${itemId}, by operator): people still ask for it`,
      vault: itemId,
    });
    expect(run.decisions?.[1]?.applied).toBeUndefined();
    expect(await closed(loop, number)).toBe(false);
    expect(await notes(loop, number)).toHaveLength(1);
    expect((await projectStub(env, loop.project).vaultItem(itemId))?.state).toBe("rejected");
  });

  it("expired on the project's alarm, is recorded rejected, and nothing reaches the forge", async () => {
    const { loop, number, runId, itemId } = await heldClose("agent-vault-expiry", {
      vault: { expiryMs: 1_000 },
    });
    // The deadline passes; the alarm armed for it expires the item.
    const stub = await expireOnAlarm(loop.project, itemId);
    expect((await stub.vaultItem(itemId))?.state).toBe("expired");
    const run = await runOf(loop.project, runId);
    expect(run.decisions?.[1]).toMatchObject({
      status: "rejected",
      reason: `the vault's ${itemId} expired with nobody deciding`,
    });
    expect(await closed(loop, number)).toBe(false);
    expect(await notes(loop, number)).toHaveLength(1);
  });
});

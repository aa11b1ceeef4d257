/**
 * Action issues in the Worker: a triage naming a formula queues a job that carries the formula as the default
 * branch has it; the claim adds only the secrets the formula declares; a progress report becomes one comment;
 * the session's `PHASE:vault` with its step waits for the vault; a formula that cannot be read escalates.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import { call, claim, complete, heartbeat, jobsOf, newRunner, taken } from "./support/jobs.ts";
import { type Loop, loopProject, push, send, until } from "./support/review.ts";

const DEPLOY = "deploy-secret-in-worker-test";
const FORMULA = `---
name: rotate-token
version: 3
description: Rotate the deploy token
secrets: [DEPLOY_TOKEN]
steps:
  - id: rotate
    description: Revoke the old token
    command: ./rotate.sh
    dangerous: true
    secrets: [DEPLOY_TOKEN]
---
Be careful.
`;

async function actionProject(name: string): Promise<Loop> {
  const loop = await loopProject(name, {
    actionSecrets: { DEPLOY_TOKEN: DEPLOY, UNUSED_TOKEN: "never-sent-1234" },
  });
  await push(loop, 0, { ".conveyor/formulas/rotate-token.md": FORMULA }, { branch: "main" });
  return loop;
}

/** An issue on the forge, labelled action, triaged as a writer queued it: its number. */
async function triage(loop: Loop, formula: string): Promise<number> {
  const body = `Formula: ${formula}`;
  const { number } = await loop.forge.createIssue({ title: "Rotate the token", body, labels: [] });
  await send(loop, number, {
    type: "triage",
    blockers: [],
    brief: { title: "Rotate the token", body, by: "maintainer" },
    action: { formula },
  });
  return number;
}

describe("action issues in the Worker", () => {
  it("queue a job with the formula; the claim carries its declared secrets only", async () => {
    const loop = await actionProject("action-job");
    const runner = await newRunner("action-1", { projects: [loop.project] });
    const number = await triage(loop, "rotate-token");
    await until(loop, number, (v) => v.outbox.every((o) => o.pending === 0));
    const claimed = taken(await claim(runner, [loop.project]));
    expect(claimed.job.kind).toBe("implement");
    expect(claimed.job.action).toEqual({
      formula: {
        name: "rotate-token",
        version: "3",
        description: "Rotate the deploy token",
        inputs: [],
        network: [],
        secrets: ["DEPLOY_TOKEN"],
        steps: [
          {
            id: "rotate",
            description: "Revoke the old token",
            command: "./rotate.sh",
            dangerous: true,
            secrets: ["DEPLOY_TOKEN"],
          },
        ],
      },
      guidance: "Be careful.",
      approvedStep: null,
      secrets: { DEPLOY_TOKEN: DEPLOY },
    });
    // Not in the job queue: only the claim's answer holds the value.
    const [stored] = await jobsOf(loop.project);
    expect(JSON.stringify(stored)).not.toContain(DEPLOY);

    await heartbeat(runner, claimed);
    const events = (body: object) => call(runner, `jobs/${claimed.job.id}/events`, body);
    const note = { kind: "progress", seq: 1, text: "Checked the token." };
    for (let i = 0; i < 2; i++) {
      const res = await events({ leaseToken: claimed.leaseToken, events: [note] });
      expect(res.status).toBe(204);
    }
    const res = await complete(runner, claimed, { phase: "vault", step: "rotate", sessionId: "sess-a" });
    expect(res.status).toBe(204);
    const view = await until(loop, number, (v) => {
      if (v.state === "escalated")
        throw new Error(JSON.stringify(v.history.map((h) => [h.event, h.to, h.reason])));
      return v.state === "awaiting_approval";
    });
    expect(view.reason).toBe("step rotate waits for the vault's decision");
    // The vault holds the step as an action_step item of this issue, and the issue knows its id.
    const held = await until(loop, number, (v) => v.vaultItem !== null);
    const item = await projectStub(env, loop.project).vaultItem(held.vaultItem ?? "");
    expect(item).toMatchObject({
      kind: "action_step",
      state: "pending",
      requester: { type: "issue", issue: number, step: "rotate" },
      title: `Run step rotate of formula rotate-token (v3) for #${number}: Revoke the old token`,
    });
    const progress = (await loop.forge.listComments(number)).filter((c) =>
      c.body.startsWith("**Progress:**"),
    );
    expect(progress).toHaveLength(1);
    expect(progress[0]?.body).toMatch(/^\*\*Progress:\*\* Checked the token\./);
  });

  it("escalate when the formula cannot be read, naming the file's problem", async () => {
    const loop = await actionProject("action-missing");
    const number = await triage(loop, "no-such-formula");
    const view = await until(loop, number, (v) => v.state === "escalated");
    expect(view.reason).toMatch(
      /no formula \.conveyor\/formulas\/no-such-formula\.md \(or \.toml\) on the default branch/,
    );
    expect(await issueStub(env, loop.project, number).view()).toMatchObject({ kind: "action" });
  });
});

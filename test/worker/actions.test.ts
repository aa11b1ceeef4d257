/**
 * Action issues in the Worker: a triage naming a formula queues a job that carries the formula as the default
 * branch has it; the claim adds only the secrets the formula declares; a progress report becomes one comment;
 * the session's `PHASE:vault` with its step waits for the vault; a formula that cannot be read escalates.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import type { Claim } from "../../src/runner-api/contract.ts";
import { ROTATE_SH, ROTATE_TOKEN, ROTATE_TOKEN_MD } from "../support/rotate-token.ts";
import { call, claim, complete, heartbeat, jobsOf, newRunner, pastDeadline, taken } from "./support/jobs.ts";
import { logged } from "./support/log.ts";
import { type Loop, loopProject, push, send, until } from "./support/review.ts";

const DEPLOY = "deploy-secret-in-worker-test";

async function actionProject(name: string, settings: object = {}): Promise<Loop> {
  const loop = await loopProject(name, {
    actionSecrets: { DEPLOY_TOKEN: DEPLOY, UNUSED_TOKEN: "never-sent-1234" },
    ...settings,
  });
  const files = { ".conveyor/formulas/rotate-token.md": ROTATE_TOKEN_MD, "rotate.sh": ROTATE_SH };
  await push(loop, 0, files, { branch: "main" });
  return loop;
}

/** Git's id of a file's content: what the forge lists as its `sha`. */
async function blobId(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const object = new TextEncoder().encode(`blob ${bytes.length}\0${text}`);
  const digest = await crypto.subtle.digest("SHA-1", object);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
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

/** env.DB, but every statement that reads a project's sealed secrets fails as D1 does when it is out. */
const secretsOutage = {
  ...env,
  DB: new Proxy(env.DB, {
    get(db, key) {
      if (key !== "prepare") return Reflect.get(db, key);
      return (sql: string) => {
        if (sql.includes('select "secrets" from "projects"'))
          throw new Error("D1_ERROR: Network connection lost.");
        return db.prepare(sql);
      };
    },
  }),
};

describe("action issues in the Worker", () => {
  it("a D1 failure reading the secrets after the lease: the claim fails, and the lease goes back at no attempt's cost", async () => {
    const loop = await actionProject("action-d1-out", { jobs: { confirmMs: 5_000 } });
    const runner = await newRunner("action-d1", { projects: [loop.project] });
    const number = await triage(loop, "rotate-token");
    await until(loop, number, (v) => v.outbox.every((o) => o.pending === 0));
    const request = new Request("https://conveyor.test/runner/v1/claim", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${runner.token}` },
      body: JSON.stringify({ waitMs: 0, projects: [loop.project] }),
    });
    const failed = await worker.fetch(request, secretsOutage, createExecutionContext());
    expect(failed.status).toBe(500);
    expect(logged).toContainEqual({
      level: "error",
      msg: "unhandled error",
      error: "D1_ERROR: Network connection lost.",
      path: "/runner/v1/claim",
    });
    const [lost] = await jobsOf(loop.project);
    expect(lost).toMatchObject({ status: "leased", attempt: 1 });
    // Nobody confirms the lease the runner never got: it comes back with its attempt unspent.
    await pastDeadline(loop.project, lost?.id ?? "", "lease_expires_at");
    expect((await jobsOf(loop.project))[0]).toMatchObject({ status: "queued", attempt: 1 });
    const claimed = taken(await claim(runner, [loop.project]));
    expect(claimed.job).toMatchObject({ id: lost?.id, attempt: 1 });
    expect(claimed.job.action?.secrets).toEqual({ DEPLOY_TOKEN: DEPLOY });
  });

  it("queue a job with the formula; the claim carries its declared secrets only", async () => {
    const loop = await actionProject("action-job");
    const runner = await newRunner("action-1", { projects: [loop.project] });
    const number = await triage(loop, "rotate-token");
    await until(loop, number, (v) => v.outbox.every((o) => o.pending === 0));
    const claimed = taken(await claim(runner, [loop.project]));
    expect(claimed.job.kind).toBe("implement");
    // The formula as the default branch has it, and the commit it was read at: the steps run from there.
    const main = await loop.forge.getBranchHead("main");
    expect(claimed.job.action).toEqual({
      formula: ROTATE_TOKEN,
      guidance: "Be careful.",
      commit: main,
      approvedStep: null,
      approvedItem: null,
      approval: null,
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
    // The session's words quoted apart under its name.
    expect(progress[0]?.body).toMatch(/^\*\*Progress:\*\*\n\nIts session wrote:\n\n> Checked the token\./);
  });

  /** An action issue whose session asked the vault for step rotate: its number, runner and vault item. */
  async function awaitingApproval(name: string) {
    const loop = await actionProject(name);
    const runner = await newRunner(name, { projects: [loop.project] });
    const number = await triage(loop, "rotate-token");
    await until(loop, number, (v) => v.outbox.every((o) => o.pending === 0));
    const claimed = taken(await claim(runner, [loop.project]));
    await heartbeat(runner, claimed);
    await complete(runner, claimed, { phase: "vault", step: "rotate", sessionId: "sess-a" });
    const held = await until(loop, number, (v) => v.vaultItem !== null);
    return { loop, runner, number, item: held.vaultItem ?? "" };
  }

  const approve = (loop: Loop, item: string) =>
    projectStub(env, loop.project).vaultDecide(item, { decision: "approve", by: "maintainer" });

  it("an approved step resumes the session with a job that fires the approval once, whatever its attempts", async () => {
    const { loop, runner, number, item } = await awaitingApproval("action-approved");
    expect(await approve(loop, item)).toMatchObject({ ok: true });
    // What the human approved: the command, and the commit and blob ids of the files it runs.
    const main = await loop.forge.getBranchHead("main");
    const files = { "rotate.sh": await blobId(ROTATE_SH) };
    const vault = projectStub(env, loop.project);
    expect(await vault.approvedVaultPayload(item)).toMatchObject({
      command: "./rotate.sh",
      commit: main,
      files,
    });
    await until(loop, number, (v) => v.state === "running" && v.outbox.every((o) => o.pending === 0));
    const resumed = taken(await claim(runner, [loop.project]));
    expect(resumed.job).toMatchObject({ kind: "resume", sessionId: "sess-a" });
    expect(resumed.job.action).toMatchObject({
      commit: main,
      approvedStep: "rotate",
      approvedItem: item,
      approval: { commit: main, files },
    });
    // Approved, not yet fired: it fires when the step is about to run.
    expect((await vault.vaultItem(item))?.state).toBe("approved");

    const fire = async (claimed: Claim, step: string, leaseToken = claimed.leaseToken) => {
      const res = await call(runner, `jobs/${claimed.job.id}/fire`, { leaseToken, step });
      return { status: res.status, body: await res.json() };
    };
    expect(await fire(resumed, "rotate", "not-the-lease")).toMatchObject({ status: 409 });
    expect(await fire(resumed, "other")).toEqual({
      status: 200,
      body: { fired: false, reason: `job ${resumed.job.id} carries no vault approval of step other` },
    });
    expect(await fire(resumed, "rotate")).toEqual({ status: 200, body: { fired: true } });
    const fired = await vault.vaultItem(item);
    expect(fired?.state).toBe("fired");
    const by = `run by job ${resumed.job.id} (attempt 1)`;
    expect(fired?.audit.at(-1)).toMatchObject({ action: "fired", reason: by });
    // Its answer was lost: the same attempt asks again and is told it fired, so the step still runs once.
    expect(await fire(resumed, "rotate")).toEqual({ status: 200, body: { fired: true } });
    expect((await vault.vaultItem(item))?.audit.filter((e) => e.action === "fired")).toHaveLength(1);

    // The runner dies after running it; the job's next attempt may not run it again.
    await heartbeat(runner, resumed);
    await pastDeadline(loop.project, resumed.job.id, "lease_expires_at");
    const retried = taken(await claim(runner, [loop.project]));
    expect(retried.job).toMatchObject({ id: resumed.job.id, attempt: 2 });
    expect(await fire(retried, "rotate")).toEqual({
      status: 200,
      body: { fired: false, reason: `${item} was approved by maintainer and has fired` },
    });
  });

  it("a session's done stands only once its dangerous step fired: before, the issue escalates saying why", async () => {
    const { loop, runner, number, item } = await awaitingApproval("action-unfired");
    expect(await approve(loop, item)).toMatchObject({ ok: true });
    await until(loop, number, (v) => v.state === "running" && v.outbox.every((o) => o.pending === 0));
    const resumed = taken(await claim(runner, [loop.project]));
    await heartbeat(runner, resumed);
    // The step never ran (the runner refused it before firing); the session says it is done all the same.
    await complete(runner, resumed, { phase: "done", sessionId: "sess-a", summary: "Rotated the token." });
    const view = await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
    expect(view.reason).toBe(
      `the session said the action is done, but step rotate of formula rotate-token did not run: vault item ${item} approved it, but it never fired`,
    );
    expect((await loop.forge.getIssue(number)).state).toBe("open");
    expect((await projectStub(env, loop.project).vaultItem(item))?.state).toBe("approved");

    // A human's reply resumes it without the approval (it was that job's alone): done escalates again until
    // the session asks the vault anew and the step fires.
    await send(loop, number, { type: "human_reply", author: "maintainer", text: "Run it now." });
    await until(loop, number, (v) => v.state === "running" && v.outbox.every((o) => o.pending === 0));
    const again = taken(await claim(runner, [loop.project]));
    await heartbeat(runner, again);
    const fired = await call(runner, `jobs/${again.job.id}/fire`, {
      leaseToken: again.leaseToken,
      step: "rotate",
    });
    expect(await fired.json()).toEqual({
      fired: false,
      reason: `job ${again.job.id} carries no vault approval of step rotate`,
    });
    await complete(runner, again, { phase: "done", sessionId: "sess-a" });
    expect((await until(loop, number, (v) => v.state === "escalated" && v.iteration === 3)).reason).toMatch(
      /did not run: vault item v\d+ approved it, but it never fired$/,
    );
  });

  it("a session that says done without ever asking the vault for its dangerous step escalates", async () => {
    const loop = await actionProject("action-skipped");
    const runner = await newRunner("action-skipped", { projects: [loop.project] });
    const number = await triage(loop, "rotate-token");
    await until(loop, number, (v) => v.outbox.every((o) => o.pending === 0));
    const claimed = taken(await claim(runner, [loop.project]));
    await heartbeat(runner, claimed);
    await complete(runner, claimed, { phase: "done", sessionId: "sess-a", summary: "Rotated." });
    const view = await until(loop, number, (v) => v.state === "escalated");
    expect(view.reason).toBe(
      "the session said the action is done, but step rotate of formula rotate-token did not run: the session never asked the vault for it (PHASE:vault, Step: rotate)",
    );
  });

  it("an approved step that fired lets the action end done", async () => {
    const { loop, runner, number, item } = await awaitingApproval("action-fired");
    await approve(loop, item);
    await until(loop, number, (v) => v.state === "running" && v.outbox.every((o) => o.pending === 0));
    const resumed = taken(await claim(runner, [loop.project]));
    await heartbeat(runner, resumed);
    await call(runner, `jobs/${resumed.job.id}/fire`, { leaseToken: resumed.leaseToken, step: "rotate" });
    await complete(runner, resumed, { phase: "done", sessionId: "sess-a", summary: "Rotated the token." });
    await until(loop, number, (v) => v.state === "done");
  });

  it("a formula needing a secret the project lacks escalates before any session runs", async () => {
    const loop = await actionProject("action-no-secret", {
      actionSecrets: { UNUSED_TOKEN: "never-sent-1234" },
    });
    const number = await triage(loop, "rotate-token");
    const view = await until(loop, number, (v) => v.state === "escalated");
    expect(view.reason).toMatch(
      /formula rotate-token needs the project secret DEPLOY_TOKEN, which the project lacks: add it to its actionSecrets/,
    );
    expect(await jobsOf(loop.project)).toEqual([]);
  });

  it("a step whose command changed on the default branch after the vault was asked does not run on that approval", async () => {
    const { loop, runner, number, item } = await awaitingApproval("action-swapped");
    // Someone with push access swaps the command while the item waits for a human.
    const swapped = ROTATE_TOKEN_MD.replace(
      "command: ./rotate.sh",
      "command: ./rotate.sh && ./exfiltrate.sh",
    );
    await push(loop, 0, { ".conveyor/formulas/rotate-token.md": swapped }, { branch: "main" });
    expect(await approve(loop, item)).toMatchObject({ ok: true });
    const view = await until(loop, number, (v) => v.state === "escalated");
    expect(view.reason).toMatch(
      /step rotate of formula rotate-token changed since the vault approved it \(v3\): its command; it does not run without a new approval/,
    );
    expect(await claim(runner, [loop.project])).toBeNull();
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

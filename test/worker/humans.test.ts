import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { commentMarker } from "../../src/crypto/markers.ts";
import type { Proposal } from "../../src/domain/escalation.ts";
import { createForgeClient } from "../../src/forge/client/index.ts";
import { reviewOnce } from "../../src/forge/comment-once.ts";
import { composePost } from "../../src/forge/post/post.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import { claim, newRunner, taken } from "./support/jobs.ts";
import {
  control,
  critic,
  firstPush,
  type Loop,
  loopProject,
  push,
  report,
  send,
  services,
  until,
} from "./support/review.ts";
import {
  COMMENT,
  commentDelivery,
  commentPayload,
  deliver,
  issueClosedDelivery,
  pretty,
} from "./support/webhooks.ts";

const issues = JSON.parse(env.WEBHOOK_FIXTURES["gitea/issues.opened.json"] ?? "{}");

const forgeAs = (loop: Loop, token: string) =>
  createForgeClient({ forge: "forgejo", apiUrl: services.forgeApiUrl, repo: loop.repo, token });

async function escalated(name: string) {
  const loop = await loopProject(name);
  const { number } = await firstPush(loop, { "src/a.ts": "export {};\n" });
  await until(loop, number, (v) => v.state === "awaiting_review");
  await send(loop, number, { type: "review_failed", reason: "the critic was unreachable" });
  await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
  await control("user", { repo: loop.repo, login: "maintainer", level: "write" });
  await control("user", { repo: loop.repo, login: "visitor", level: "read" });
  return { loop, number };
}

/** The triage's proposal of `step` for the issue's latest escalation, as the project's object hands it on. */
async function propose(loop: Loop, number: number, diagnosis: string, step: Proposal["step"]) {
  const { escalation } = (await issueStub(env, loop.project, number).view()) ?? {};
  const proposal = {
    escalation: escalation?.n ?? 0,
    runId: `run_${step.kind}`,
    agent: "triage",
    diagnosis,
    step,
  };
  await send(loop, number, { type: "triage_proposal", proposal });
  return escalation;
}

describe("humans on the forge", () => {
  it("a reply from a user with write access resumes the same session with the reply", async () => {
    const { loop, number } = await escalated("reply");
    const res = await commentDelivery(loop, number, "maintainer", "Use the v2 endpoint; v1 is gone.");
    expect(await res.json()).toEqual({ accepted: true, events: 1 });
    const view = await until(loop, number, (v) => v.state === "revising");
    expect(view).toMatchObject({ sessionId: `sess-${number}`, iteration: 2 });
    const runner = await newRunner("humans");
    const resume = taken(await claim(runner, [loop.project]));
    expect(resume.job).toMatchObject({
      kind: "resume",
      sessionId: `sess-${number}`,
      instructions: "maintainer: Use the v2 endpoint; v1 is gone.",
    });
  });

  it("a reply from a user without write access is not taken", async () => {
    const { loop, number } = await escalated("noreply");
    const res = await commentDelivery(loop, number, "visitor", "I think you should rewrite it in Rust.");
    expect(await res.json()).toEqual({ ignored: "visitor has no write access" });
    expect((await issueStub(env, loop.project, number).view())?.state).toBe("escalated");
  });

  it("/conveyor abandon and /conveyor retry from a writer act; from anyone else they are refused with a reply", async () => {
    const { loop, number } = await escalated("commands");
    const refused = await commentDelivery(loop, number, "visitor", "/conveyor abandon");
    expect(await refused.json()).toEqual({ accepted: true, events: 1 });
    await until(loop, number, (v) => v.outbox.length === 0);
    const notes = (await loop.forge.listComments(number)).map((c) => c.body);
    expect(
      notes.some((b) => b.startsWith("@visitor only users with write access can command Conveyor.")),
    ).toBe(true);
    expect((await issueStub(env, loop.project, number).view())?.state).toBe("escalated");

    await commentDelivery(loop, number, "maintainer", "/conveyor abandon\nnot needed any more");
    expect(await issueStub(env, loop.project, number).view()).toMatchObject({
      state: "abandoned",
      reason: "abandoned by maintainer",
    });
    await commentDelivery(loop, number, "maintainer", "/conveyor retry");
    expect((await issueStub(env, loop.project, number).view())?.state).toBe("queued");
  });

  it("/conveyor accept finds nothing to accept until the triage proposed a step, which it then carries out", async () => {
    const { loop, number } = await escalated("accept");
    const early = await commentDelivery(loop, number, "maintainer", "/conveyor accept");
    expect(await early.json()).toEqual({ accepted: true, events: 2 });
    await until(loop, number, (v) => v.outbox.length === 0);
    const notes = (await loop.forge.listComments(number)).map((c) => c.body);
    expect(notes).toContainEqual(
      expect.stringMatching(/^@maintainer nothing to accept: no triage proposal waits to be accepted\./),
    );
    // The triage's answer, as the project's object hands it on once the run's output passed its check.
    const escalation = await propose(loop, number, "Stale.", { kind: "abandon" });
    expect(escalation).toMatchObject({ cause: "critic_failed", from: "awaiting_review" });
    await commentDelivery(loop, number, "maintainer", "/conveyor accept");
    expect(await issueStub(env, loop.project, number).view()).toMatchObject({
      state: "abandoned",
      reason: "abandoned by maintainer, as the triage proposed",
      proposal: null,
    });
  });

  it("an accepted split files each part once, queued in the writer's name, and closes the issue", async () => {
    const { loop, number } = await escalated("split");
    const parts = [
      { title: "Parse the header", body: "Parse the header line. With tests." },
      { title: "Parse the rows", body: "Parse each row after the header. With tests." },
    ];
    await propose(loop, number, "Too big.", { kind: "split", parts });
    await commentDelivery(loop, number, "maintainer", "/conveyor accept");
    const view = await until(loop, number, (v) => v.state === "abandoned" && v.outbox.length === 0);
    expect(view.reason).toBe("split into 2 issues, as the triage proposed (accepted by maintainer)");
    expect((await loop.forge.getIssue(number)).state).toBe("closed");
    const filed = (await loop.forge.listIssuesByLabel(loop.settings.labels.backlog, "all")).filter((i) =>
      parts.some((p) => p.title === i.title),
    );
    expect(filed.map((i) => i.title).sort()).toEqual(parts.map((p) => p.title).sort());
    for (const part of filed) {
      expect(part.body).toContain(`Split from #${number}`);
      // Queued in the writer's name: each part's issue is in the backlog's lifecycle.
      const queued = await until(loop, part.number, (v) => v.state === "queued");
      expect(queued.brief).toMatchObject({ title: part.title, by: "maintainer" });
    }
    const named = (await loop.forge.listComments(number)).filter((c) => c.body.includes("Split into #"));
    expect(named).toHaveLength(1);
  });

  it("two copies of one delivery in flight together post the refusal once", async () => {
    const { loop, number } = await escalated("twice");
    const payload = commentPayload(loop, number, "visitor", "/conveyor retry");
    const deliveryId = crypto.randomUUID();
    await Promise.all([0, 1].map(() => deliver(loop.project, COMMENT, payload, { deliveryId })));
    await until(loop, number, (v) => v.outbox.length === 0);
    const refusals = (await loop.forge.listComments(number)).filter((c) => c.body.startsWith("@visitor "));
    expect(refusals).toHaveLength(1);
  });

  it("a verdict is submitted once however often its effect runs, and a forged marker does not stop it", async () => {
    const loop = await loopProject("review-once");
    const { number } = await firstPush(loop, { "src/a.ts": "export {};\n" });
    const { prNumber } = await until(loop, number, (v) => v.state === "awaiting_review");
    const pr = prNumber ?? 0;
    const policy = {
      forge: "forgejo" as const,
      forgeOrigin: "http://127.0.0.1",
      linkHosts: [],
      mentions: [],
    };
    const poster = {
      forge: loop.forge,
      account: "conveyor",
      secretsKey: env.CONVEYOR_SECRETS_KEY,
      policy,
      issueAuthor: false,
    };
    const key = `${loop.project}#${number}:99:0`;
    const marker = await commentMarker(env.CONVEYOR_SECRETS_KEY, key);
    const other = await control<{ token: string }>("user", {
      repo: loop.repo,
      login: "mimic",
      level: "write",
    });
    await forgeAs(loop, other.token).createReview(pr, { event: "COMMENT", body: `looks fine ${marker}` });

    for (let i = 0; i < 3; i++)
      await reviewOnce(poster, pr, key, {
        event: "COMMENT",
        body: composePost(policy, [{ conveyor: "**Critic: APPROVE**" }]),
      });
    const mine = (await loop.forge.listReviews(pr)).filter((r) => r.author === "conveyor");
    expect(mine.map((r) => r.body)).toEqual([`**Critic: APPROVE**\n\n${marker}`]);
  });

  it("forged markers neither silence Conveyor's notice nor hide a human's reply", async () => {
    const loop = await loopProject("forged");
    const { number } = await firstPush(loop, { "src/a.ts": "export {};\n" });
    const ready = await until(loop, number, (v) => v.state === "awaiting_review");
    const visitor = await control<{ token: string }>("user", {
      repo: loop.repo,
      login: "visitor",
      level: "read",
    });
    await control("user", { repo: loop.repo, login: "maintainer", level: "write" });
    // The escalation's notice is the second effect of the next edge: its key is predictable.
    const seq = Math.max(...ready.history.map((h) => h.seq)) + 1;
    await forgeAs(loop, visitor.token).comment(
      number,
      `+1 <!-- conveyor:${loop.project}#${number}:${seq}:1 -->`,
    );

    await send(loop, number, { type: "review_failed", reason: "the critic was unreachable" });
    await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
    const notices = (await loop.forge.listComments(number)).filter((c) =>
      c.body.startsWith("**Conveyor needs a human.**"),
    );
    expect(notices.map((c) => c.author)).toEqual(["conveyor"]);

    const reply = await commentDelivery(
      loop,
      number,
      "maintainer",
      "<!-- conveyor: --> Use the v2 endpoint.",
    );
    expect(await reply.json()).toEqual({ accepted: true, events: 1 });
    expect((await issueStub(env, loop.project, number).view())?.state).toBe("revising");
  });

  it("the loop:abandon label abandons a live issue", async () => {
    const { loop, number } = await escalated("label");
    const labelled = await deliver(
      loop.project,
      { forge: "forgejo", event: { grouped: "issues", type: "issue_label" } },
      pretty({
        ...issues,
        action: "label_updated",
        issue: { ...issues.issue, number, state: "open", labels: [{ id: 9, name: "loop:abandon" }] },
        repository: { ...issues.repository, full_name: loop.repo },
        sender: { ...issues.sender, login: "maintainer" },
      }),
    );
    expect(await labelled.json()).toEqual({ accepted: true, events: 1 });
    expect((await issueStub(env, loop.project, number).view())?.reason).toBe("abandoned by maintainer");
  });
});

describe("humans on the pull request", () => {
  it("a held pull request a human merges by hand ends merged, though its issue's closing came first", async () => {
    const loop = await loopProject("hand-merge");
    const { number } = await firstPush(loop, { "src/a.ts": "export {};\n", ".woodpecker.yml": "y: 1\n" });
    await critic(loop, number, [report("APPROVE", "Good.")]);
    const held = await until(loop, number, (v) => v.state === "awaiting_approval" && v.vaultItem !== null);
    await loop.forge.mergePullRequest(held.prNumber ?? 0, { method: "merge" });
    // The merge closed the issue ("Closes #n"); that webhook arrives before the pull request's.
    expect((await loop.forge.getIssue(number)).state).toBe("closed");
    const closed = await issueClosedDelivery(loop, number);
    expect(await closed.json()).toMatchObject({ accepted: true });
    const done = await until(loop, number, (v) => v.state !== "awaiting_approval" && v.outbox.length === 0);
    expect(done).toMatchObject({ state: "merged", prNumber: held.prNumber });
    // Nothing waits on the held merge's vault item any more.
    expect((await projectStub(env, loop.project).vaultItem(held.vaultItem ?? ""))?.state).toBe("withdrawn");
  });

  it("a pull request a human closed is let go: after a retry the next push opens a new one", async () => {
    const { loop, number } = await escalated("pr-closed");
    const first = (await issueStub(env, loop.project, number).view())?.prNumber ?? 0;
    await loop.forge.updatePullRequest(first, { state: "closed" });
    await send(loop, number, { type: "pr_closed", number: first, byConveyor: true });
    await send(loop, number, { type: "retry", by: "maintainer" });
    const sha = await push(loop, number, { "src/a.ts": "export const a = 2;\n" });
    await send(loop, number, { type: "dispatched", jobId: "job-retry", runnerId: "runner-1" });
    await send(loop, number, { type: "phase", phase: "awaiting_ci", headSha: sha, sessionId: "sess-2" });
    const reopened = await until(loop, number, (v) => v.prNumber !== null);
    expect(reopened.prNumber).not.toBe(first);
    const pull = await loop.forge.getPullRequest(reopened.prNumber ?? 0);
    expect(pull).toMatchObject({ state: "open", headSha: sha });
  });
});

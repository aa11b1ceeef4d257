/**
 * Nothing stuck, nothing silent (issue 14): effects the forge refuses for good go to the dead letter and
 * escalate while their lane goes on; open_pull_request tells "already exists" from other refusals; merging
 * has a timer; escalations remind and say so when they expire. Against the local forge, time moved by
 * setting the DO's timers due and running its alarm.
 */
import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TimerKind } from "../../src/domain/lifecycle.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { sendEvent } from "../../src/projects/lifecycle-client.ts";
import { loadProject } from "../../src/projects/store.ts";
import { formFields, page, post, sessionCookie } from "./dashboard-support.ts";
import {
  control,
  critic,
  firstPush,
  firstSession,
  type Loop,
  loopProject,
  push,
  report,
  send,
  until,
} from "./support/review.ts";
import { OPERATOR } from "./support/webhooks.ts";

const comments = async (loop: Loop, number: number) =>
  (await loop.forge.listComments(number)).map((c) => c.body);

/** As time would: the timer of `kind` comes due, and the object's alarm runs. */
async function fire(loop: Loop, number: number, kind: TimerKind) {
  const stub = issueStub(env, loop.project, number);
  await runInDurableObject(stub, async (_instance, state) => {
    state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE kind = ?", kind);
    await state.storage.setAlarm(Date.now());
  });
  await runDurableObjectAlarm(stub);
}

describe("an effect the forge refuses for good", () => {
  it("goes to the dead letter, the issue escalates, and later effects of its lane are delivered", async () => {
    const loop = await loopProject("dead-letter");
    const { number } = await loop.forge.createIssue({ title: "Refused", body: "x", labels: ["backlog"] });
    await send(loop, number, { type: "triage", blockers: [] });
    // A comment on an issue that does not exist: the forge answers 404 on every attempt.
    await send(loop, number, { type: "reply", thread: 99_999, text: "into the void" });
    await send(loop, number, { type: "reply", thread: number, text: "the comment after it" });

    const view = await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
    expect(view.reason).toMatch(/^Conveyor gave up on an action \(comment\): .*404/);
    expect(view.deadLetters).toEqual([
      expect.objectContaining({ kind: "comment", attempts: 1, error: expect.stringContaining("404") }),
    ]);
    expect(view.history.map((h) => h.event)).toContain("effect_failed");
    const posted = await comments(loop, number);
    expect(posted).toContainEqual(expect.stringContaining("the comment after it"));
    expect(posted).toContainEqual(expect.stringContaining("Conveyor gave up on an action (comment)"));
    expect((await loop.forge.getIssue(number)).labels).toContain(loop.settings.labels.needsHuman);

    // The issue page says what Conveyor gave up on, and why.
    const res = await page(`/dashboard/projects/${loop.project}/issues/${number}`, await sessionCookie());
    const html = await res.text();
    expect(html).toContain("gave up on comment");
    expect(html).toContain("issue does not exist");
  });
});

describe("an operator sends a dead letter again", () => {
  const redeliver = (loop: Loop, number: number, id: number | string) =>
    SELF.fetch(
      `https://conveyor.test/api/v1/projects/${loop.project}/issues/${number}/dead-letters/${id}/redeliver`,
      { method: "POST", headers: OPERATOR },
    );

  it("once the token's rights are fixed, the refused label is applied from the issue page; the API then finds nothing to send", async () => {
    // Conveyor's token has lost its write access: every label and comment is refused (403).
    const login = `reader-${Date.now().toString(36)}`;
    const { token } = await control<{ token: string }>("user", { repo: "", login, level: null });
    const loop = await loopProject("redeliver", { forgeToken: token });
    await control("user", { repo: loop.repo, login, level: "read" });
    const { number } = await loop.forge.createIssue({ title: "Refused", body: "x", labels: ["backlog"] });
    await send(loop, number, { type: "triage", blockers: [] });
    // Its session starts: the issue is labelled in progress, which needs write access.
    await send(loop, number, { type: "dispatched", jobId: "job-1", runnerId: "runner-1" });
    const refused = await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
    // Newest first: the escalation's needs-human label, then the in-progress label that escalated it.
    expect(refused.deadLetters.map((d) => d.kind)).toEqual(["labels", "labels"]);
    const [labels] = refused.deadLetters;
    if (!labels) throw new Error("no dead letter");
    expect(labels.error).toContain("403");
    const { needsHuman } = loop.settings.labels;
    expect((await loop.forge.getIssue(number)).labels).not.toContain(needsHuman);

    await control("user", { repo: loop.repo, login, level: "write" });
    // The operator sends it again from the issue's page.
    const cookie = await sessionCookie();
    const issuePage = `/dashboard/projects/${loop.project}/issues/${number}`;
    const action = `${issuePage}/dead-letters/${labels.id}/redeliver`;
    const fields = formFields(await (await page(issuePage, cookie)).text(), action);
    expect((await post(action, cookie, { ...fields, csrf: "" })).status).toBe(403);
    const sent = await post(action, cookie, fields);
    expect(sent.status).toBe(303);
    expect(sent.headers.get("location")).toBe(issuePage);
    const after = await until(loop, number, (v) => v.outbox.length === 0);
    expect(after.deadLetters.map((d) => d.id)).toEqual([refused.deadLetters[1]?.id]);
    expect((await loop.forge.getIssue(number)).labels).toContain(needsHuman);

    const again = await redeliver(loop, number, labels.id);
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({
      error: `${loop.project}#${number}: issue has no dead letter ${labels.id}`,
    });
    expect((await redeliver(loop, number, "x")).status).toBe(400);
    expect((await redeliver(loop, 99_999, 1)).status).toBe(404);
  });
});

describe("open_pull_request refused", () => {
  it("with no commits between the branch and the base: a permanent failure that escalates", async () => {
    const loop = await loopProject("no-commits");
    const { number } = await loop.forge.createIssue({ title: "Nothing", body: "x", labels: ["backlog"] });
    // The branch exists, at the base's own commit.
    const sha = await push(loop, number, {});
    await firstSession(loop, number, sha);

    const view = await until(loop, number, (v) => v.state === "escalated");
    expect(view.reason).toMatch(/open_pull_request.*422.*no changes/);
    expect(view.prNumber).toBeNull();
  });

  it("because one is open from the branch already: that one is adopted", async () => {
    const loop = await loopProject("adopt");
    const { number } = await loop.forge.createIssue({ title: "Adopt", body: "x", labels: ["backlog"] });
    const sha = await push(loop, number, { "src/a.ts": "export const a = 1;\n" });
    const opened = await loop.forge.createPullRequest({
      head: `conveyor/${number}`,
      base: "main",
      title: "Opened by hand",
      body: "",
    });
    await firstSession(loop, number, sha);

    const view = await until(loop, number, (v) => v.prNumber !== null, 10_000);
    expect(view.prNumber).toBe(opened.number);
  });
});

describe("merging", () => {
  it("arms a timer that asks the forge whether the pull request got merged", async () => {
    const loop = await loopProject("merge-timer");
    const { number } = await firstPush(loop, { "src/parser.ts": "export const parse = 1;\n" });
    await until(loop, number, (v) => v.state === "awaiting_review");
    // The merge happens at once; its answer is held back, so the issue sits in merging meanwhile.
    await control("slow-merges", { repo: loop.repo, ms: 5_000 });
    await critic(loop, number, [report("APPROVE", "Implements the parser.")]);
    const stub = issueStub(env, loop.project, number);
    void stub.drain();
    for (let view = await stub.view(); view?.state !== "merging"; view = await stub.view()) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const merging = await stub.view();
    expect(merging?.timers.map((t) => t.kind)).toEqual(["merge"]);
    // The merge is done on the forge; only its answer is still on the way.
    while (!(await loop.forge.getPullRequest(merging?.prNumber ?? 0)).merged) {
      await new Promise((r) => setTimeout(r, 50));
    }

    await fire(loop, number, "merge");
    const view = await stub.view();
    expect(view?.state).toBe("merged");
    const confirmed = view?.history.find((h) => h.event === "merge_confirmed");
    const check = view?.history.find((h) => h.event === "timeout");
    expect(check).toMatchObject({ from: "merging", to: "merging", outcome: "applied" });
    // Applied from the check's answer (its effect key is the timeout's seq), not the merge's.
    expect(confirmed?.cause.id).toBe(`${loop.project}#${number}:${check?.seq}:0`);
  });
});

describe("an escalation nobody answers", () => {
  it("reminds at the configured interval, and says so when it expires", async () => {
    const renotify = 2 * 60 * 60_000;
    const escalation = 5 * 60 * 60_000;
    const loop = await loopProject("renotify", { timeouts: { renotify, escalation } });
    const project = await loadProject(env, loop.project);
    if (!project) throw new Error("not registered");
    const { number } = await loop.forge.createIssue({ title: "Waits", body: "x", labels: ["backlog"] });
    const cause = { kind: "operator" as const, id: "test" };
    await sendEvent(env, project, number, "t1", cause, { type: "triage", blockers: [] });
    await sendEvent(env, project, number, "t2", cause, { type: "budget_exceeded", reason: "USD 10 of 10" });

    const escalated = await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
    const at = escalated.history.at(-1)?.at ?? 0;
    expect(escalated.timers.map((t) => [t.kind, t.dueAt - at])).toEqual([
      ["renotify", renotify],
      ["escalation", escalation],
      // Its worktree is kept for a human meanwhile.
      ["retention", 7 * 24 * 60 * 60_000],
    ]);

    await fire(loop, number, "renotify");
    const reminded = await until(loop, number, (v) => v.outbox.length === 0);
    expect(reminded.state).toBe("escalated");
    const rearmed = reminded.timers.find((t) => t.kind === "renotify");
    expect(rearmed?.dueAt).toBe((reminded.history.at(-1)?.at ?? 0) + renotify);
    expect(reminded.timers.find((t) => t.kind === "escalation")?.dueAt).toBe(at + escalation);

    await fire(loop, number, "escalation");
    const expired = await until(loop, number, (v) => v.outbox.length === 0);
    expect(expired.state).toBe("abandoned");

    const posted = await comments(loop, number);
    const notice = "**Conveyor needs a human.** The reason, as recorded:\n\n> budget exceeded";
    expect(posted.filter((b) => b.includes(notice))).toHaveLength(1);
    expect(posted.filter((b) => b.includes("**Conveyor still needs a human.**"))).toHaveLength(1);
    expect(posted.at(-1)).toContain(
      "No human answered this escalation in time (budget exceeded: USD 10 of 10)",
    );
  });
});

describe("a poll that is not answered yet", () => {
  /** An issue of `loop` waiting for CI that runs 20 s, through the project's own events; once CI was polled. */
  async function polledOnce(loop: Loop) {
    const project = await loadProject(env, loop.project);
    if (!project) throw new Error("not registered");
    const { number } = await loop.forge.createIssue({ title: "Slow CI", body: "x", labels: ["backlog"] });
    const sha = await push(loop, number, { "ci.sh": "sleep 20\n" });
    const cause = { kind: "operator" as const, id: "test" };
    await sendEvent(env, project, number, "w1", cause, { type: "triage", blockers: [] });
    await sendEvent(env, project, number, "w2", cause, { type: "dispatched", jobId: "j", runnerId: "r" });
    await sendEvent(env, project, number, "w3", cause, {
      type: "phase",
      phase: "awaiting_ci",
      headSha: sha,
      branch: `conveyor/${number}`,
    });
    const view = await until(loop, number, (v) =>
      v.outbox.some((o) => o.channel === "effect:watch_ci" && o.attempts >= 1),
    );
    return { number, view };
  }

  /** Issue `number`'s CI watch delivered once more as if it had been polled `attempts` times: when it comes next. */
  async function pollAfter(loop: Loop, number: number, attempts: number) {
    const stub = issueStub(env, loop.project, number);
    const watch = "effect:watch_ci";
    await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE outbox SET attempts = ?, next_at = 0 WHERE channel = ?",
        attempts,
        watch,
      );
      await state.storage.setAlarm(Date.now());
    });
    const before = Date.now();
    await runDurableObjectAlarm(stub);
    const next = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec<{ next_at: number; attempts: number }>(
          "SELECT next_at, attempts FROM outbox WHERE channel = ?",
          watch,
        )
        .one(),
    );
    expect(next.attempts).toBe(attempts + 1);
    // The wait, and how long the delivery took (the wait runs from its end).
    return { waitMs: next.next_at - before, tookMs: Date.now() - before };
  }

  it("is no failure: watching CI that still runs never goes to the dead letter, and is polled on its own schedule", async () => {
    // One attempt only: any real failure would be given up on at once.
    const loop = await loopProject("ci-wait", { effects: { maxAttempts: 1, pollMaxMs: 5_000 } });
    const { number, view } = await polledOnce(loop);
    expect(view.state).toBe("awaiting_ci");
    expect(view.deadLetters).toEqual([]);

    // The first poll comes after twice the project's `effects.retryBaseMs` (50 ms in tests), less a fifth at most.
    const first = await pollAfter(loop, number, 0);
    expect(first.waitMs).toBeGreaterThanOrEqual(80);
    expect(first.waitMs).toBeLessThanOrEqual(100 + first.tookMs);
    // Polled a dozen times already (CI that takes minutes): the next poll still comes within the project's
    // cap (`effects.pollMaxMs`), not after the failure backoff's minutes.
    const late = await pollAfter(loop, number, 12);
    expect(late.waitMs).toBeGreaterThanOrEqual(4_000);
    expect(late.waitMs).toBeLessThanOrEqual(5_000 + late.tookMs);
  });
});

/**
 * The project's merge queue against real parts: the local forge (its CI runs the branch's ci.sh), the
 * Messages-API stand-in as the critic, the Worker's own objects. Approved pull requests whose merges all want
 * the base at once merge one after the other, each brought up to date at most once: the one whose turn it is
 * holds it through its update's CI and review, and the others wait without touching the forge. Under
 * `merge.upToDate: when_required`, a turn is only the merge where the base's protection lets a behind head merge.
 */
import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { IssueView } from "../../src/contracts/issue-object.ts";
import type { MergeQueueView } from "../../src/contracts/project-object.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import type { Write } from "../../test/support/forge/write-log.ts";
import { logged } from "./support/log.ts";
import {
  control,
  critic,
  criticCalls,
  firstPush,
  firstSession,
  forgeApi,
  type Loop,
  loopProject,
  push,
  report,
  until,
} from "./support/review.ts";
import { commentDelivery, issueClosedDelivery, OPERATOR } from "./support/webhooks.ts";

/** An issue the test stands in for: it holds the turn while the others line up behind it. */
const PHANTOM = 9_999;
const APPROVE = report("APPROVE", "Fine.");
const HOUR = 60 * 60_000;

/**
 * Issues pushing `changes` (one each) through CI and the critic's approval, one after the other, while the
 * phantom holds the turn: each merge asks and waits, in that order. Their backoff is then put an hour off, as
 * it grows after a long wait: only being told of their turn brings them on within the test.
 */
async function queued(loop: Loop, changes: Record<string, string>[]) {
  const project = projectStub(env, loop.project);
  expect(await project.joinMergeQueue(PHANTOM, 1, HOUR)).toMatchObject({ holds: true });
  const issues: { number: number; sha: string }[] = [];
  for (const [i, files] of changes.entries()) {
    const issue = await firstPush(loop, files, `Change ${i + 1}`);
    await critic(loop, issue.number, [APPROVE, APPROVE]);
    await until(loop, issue.number, (v) => v.state === "merging" && mergeWaits(v));
    issues.push(issue);
  }
  expect(numbersIn(await project.mergeQueue())).toEqual([PHANTOM, ...issues.map((i) => i.number)]);
  for (const { number } of issues)
    await runInDurableObject(issueStub(env, loop.project, number), (_object, state) => {
      state.storage.sql.exec(
        "UPDATE outbox SET next_at = ? WHERE channel = 'effect:merge'",
        Date.now() + HOUR,
      );
    });
  return issues;
}

const numbersIn = (queue: MergeQueueView) => queue.entries.map((e) => e.number);

const mergeWaits = (v: IssueView) =>
  v.outbox.some((o) => o.channel === "effect:merge" && o.attempts > 0 && o.pending > 0);

const settled = (loop: Loop, number: number) =>
  until(
    loop,
    number,
    (v) => ["merged", "escalated", "revising"].includes(v.state) && v.outbox.length === 0,
    60_000,
  );

/** The forge's update-branch and merge calls on the loop's pull requests since `from`, in order. */
async function updatesAndMerges(loop: Loop, from: number) {
  const writes = await control<Write[]>("writes", { repo: loop.repo });
  return writes.flatMap((w) => {
    const call = /\/pulls\/(\d+)\/(update|merge)$/.exec(w.path);
    return call && w.at >= from ? [{ pr: Number(call[1]), call: call[2], at: w.at }] : [];
  });
}

/** How many times the critic was asked about each issue. */
const criticCallsOf = (loop: Loop, issues: { number: number }[]) =>
  Promise.all(issues.map(({ number }) => criticCalls(loop, number)));

const applied = (v: IssueView) =>
  v.history.filter((h) => h.outcome === "applied").map((h) => `${h.event}>${h.to}`);

describe("the project's merge queue", () => {
  it("three approved pull requests merge in the order they asked, each updated at most once, the others waiting untouched", async () => {
    const loop = await loopProject("merge-queue");
    const issues = await queued(loop, [{ "a.txt": "a\n" }, { "b.txt": "b\n" }, { "c.txt": "c\n" }]);
    // The operator sees who holds the turn and who waits, in order.
    const api = await SELF.fetch(`https://conveyor.test/api/v1/projects/${loop.project}`, {
      headers: OPERATOR,
    });
    const { mergeQueue } = (await api.json()) as { mergeQueue: MergeQueueView };
    expect(numbersIn(mergeQueue)).toEqual([PHANTOM, ...issues.map((i) => i.number)]);
    expect(mergeQueue.expiresAt).toBe((mergeQueue.heldSince ?? 0) + HOUR);
    const released = Date.now();
    await projectStub(env, loop.project).leaveMergeQueue(PHANTOM, 1);

    const views = await Promise.all(issues.map(({ number }) => settled(loop, number)));
    expect(views.map((v) => [v.state, v.reason])).toEqual(views.map(() => ["merged", null]));
    // The first merged the base as it was; each after it was brought up to date once, on its turn.
    expect(views.map((v) => v.updates)).toEqual([0, 1, 1]);
    expect(applied(views[1] as IssueView).slice(-4)).toEqual([
      "branch_updated>awaiting_ci",
      "ci>awaiting_review",
      "review>merging",
      "merge_confirmed>merged",
    ]);
    // One turn after the other on the forge: nobody's update-branch or merge while another holds the turn.
    const prs = views.map((v) => v.prNumber ?? 0);
    const [a, b, c] = prs;
    expect((await updatesAndMerges(loop, released)).map((w) => `${w.call} #${w.pr}`)).toEqual([
      `merge #${a}`,
      `update #${b}`,
      `merge #${b}`,
      `update #${c}`,
      `merge #${c}`,
    ]);
    // The critic was asked again only on its turn: by each once more for its updated head, never while waiting.
    expect(await criticCallsOf(loop, issues)).toEqual([1, 2, 2]);
    const writes = await updatesAndMerges(loop, released);
    for (const [i, view] of views.entries()) {
      const own = writes.filter((w) => w.pr === prs[i]);
      const turn = { from: own[0]?.at ?? 0, to: own.at(-1)?.at ?? 0 };
      const reviews = view.history.filter((h) => h.event === "review" && h.at >= released);
      for (const review of reviews) expect(review.at).toBeGreaterThanOrEqual(turn.from);
      for (const review of reviews) expect(review.at).toBeLessThanOrEqual(turn.to);
    }
    expect(numbersIn(await projectStub(env, loop.project).mergeQueue())).toEqual([]);
  });

  it("a holder whose updated head fails CI gives the turn up, and the next is brought up to date and merged", async () => {
    const loop = await loopProject("merge-queue-red");
    // The first's CI passes until a.txt is on its base: red once its turn updates it.
    const issues = await queued(loop, [{ "ci.sh": "test ! -f a.txt\n" }, { "c.txt": "c\n" }]);
    await push(loop, 0, { "a.txt": "a\n" }, { branch: "main" });
    const released = Date.now();
    await projectStub(env, loop.project).leaveMergeQueue(PHANTOM, 1);

    const [red, next] = await Promise.all(issues.map(({ number }) => settled(loop, number)));
    expect(red?.state).toBe("revising");
    expect(applied(red as IssueView).slice(-2)).toEqual(["branch_updated>awaiting_ci", "ci>revising"]);
    expect(next).toMatchObject({ state: "merged", updates: 1, reason: null });
    const [b, c] = [red, next].map((v) => v?.prNumber ?? 0);
    const writes = await updatesAndMerges(loop, released);
    expect(writes.map((w) => `${w.call} #${w.pr}`)).toEqual([`update #${b}`, `update #${c}`, `merge #${c}`]);
    // The next was updated only once the red CI had released the turn.
    const redAt = red?.history.find((h) => h.event === "ci" && h.to === "revising")?.at ?? Infinity;
    expect(writes.find((w) => w.pr === c)?.at).toBeGreaterThanOrEqual(redAt);
    expect(numbersIn(await projectStub(env, loop.project).mergeQueue())).toEqual([]);
  });

  it("a pull request reviewed while others queue to merge is updated on its turn only, not before its review", async () => {
    const loop = await loopProject("merge-queue-review");
    const [first] = await queued(loop, [{ "a.txt": "a\n" }]);
    // The base moves (a push of someone's) once the next has its branch: behind it when the critic reviews it.
    const { number } = await loop.forge.createIssue({ title: "Change 2", body: "x", labels: ["backlog"] });
    const second = { number, sha: await push(loop, number, { "b.txt": "b\n" }) };
    await push(loop, 0, { "base.txt": "moved\n" }, { branch: "main" });
    await firstSession(loop, number, second.sha);
    await critic(loop, second.number, [APPROVE, APPROVE]);
    const waiting = await until(loop, second.number, (v) => v.state === "merging" && mergeWaits(v));
    expect(applied(waiting)).not.toContain("branch_updated>awaiting_ci");
    await projectStub(env, loop.project).leaveMergeQueue(PHANTOM, 1);

    const views = await Promise.all([first, second].map((i) => settled(loop, i?.number ?? 0)));
    expect(views.map((v) => [v.state, v.updates])).toEqual([
      ["merged", 1],
      ["merged", 1],
    ]);
  });

  it("a holder that goes silent loses the turn at its bound, saying so, and the next merges", async () => {
    const loop = await loopProject("merge-queue-silent");
    const [waiting] = await queued(loop, [{ "a.txt": "a\n" }]);
    // The phantom never merges nor releases (a holder whose release was lost); its merge asks once more, under
    // a bound that has run out by now (the project's CI and review timeouts, shortened).
    await projectStub(env, loop.project).joinMergeQueue(PHANTOM, 1, 1_500);
    const merged = await settled(loop, waiting?.number ?? 0);
    expect(merged).toMatchObject({ state: "merged", updates: 0 });
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: expect.stringMatching(/^merge turn expired/),
        project: loop.project,
        number: PHANTOM,
        next: waiting?.number,
      }),
    );
    expect(numbersIn(await projectStub(env, loop.project).mergeQueue())).toEqual([]);
  });

  it("a merge waiting for its turn holds back none of the issue's other forge writes, only the check that follows it", async () => {
    const loop = await loopProject("merge-queue-lanes");
    const [waiting] = await queued(loop, [{ "a.txt": "a\n" }]);
    const number = waiting?.number ?? 0;
    await control("user", { repo: loop.repo, login: "visitor", level: "read" });
    // A command from someone who may not give one is refused with a reply, and the issue is closed on the
    // forge (its check reads whether the pull request merged, after the merge ahead of it has its answer).
    const refused = await commentDelivery(loop, number, "visitor", "/conveyor abandon");
    expect(await refused.json()).toEqual({ accepted: true, events: 1 });
    expect(await (await issueClosedDelivery(loop, number)).json()).toMatchObject({ accepted: true });

    const replied = await until(loop, number, (v) => !v.outbox.some((o) => o.channel === "effect:comment"));
    const notes = (await loop.forge.listComments(number)).map((c) => c.body);
    expect(notes).toContainEqual(expect.stringMatching(/^@visitor only users with write access can command/));
    expect(replied.state).toBe("merging");
    expect(mergeWaits(replied)).toBe(true);
    expect(replied.outbox).toContainEqual(
      expect.objectContaining({ channel: "effect:check_merged", pending: 1, attempts: 0 }),
    );

    await projectStub(env, loop.project).leaveMergeQueue(PHANTOM, 1);
    expect(await settled(loop, number)).toMatchObject({ state: "merged", reason: null });
  });

  it("a merge that lost its turn while it read the forge writes nothing, and checks again on its next turn", async () => {
    const loop = await loopProject("merge-queue-lost");
    const [waiting] = await queued(loop, [{ "a.txt": "a\n" }]);
    const number = waiting?.number ?? 0;
    const project = projectStub(env, loop.project);
    // The base moves, and the forge re-checks the pull request a few reads long: the merge's check of it
    // reads for seconds (src/domain/stay-current.ts), then finds it behind, to be updated.
    await control("merge-checks", { repo: loop.repo, reads: 4 });
    await push(loop, 0, { "base.txt": "moved\n" }, { branch: "main" });
    const calls = async () => (await control<{ charged: number }>("api-calls", { repo: loop.repo })).charged;
    const before = await calls();
    const released = Date.now();
    await project.leaveMergeQueue(PHANTOM, 1);
    // Its turn told, the merge reads the branch, then the pull request: it is in its check.
    while ((await calls()) < before + 2) await new Promise((r) => setTimeout(r, 20));
    // Meanwhile its turn runs out (its bound shortened, as the silent holder's), and the phantom, asking again,
    // holds the next one.
    await project.joinMergeQueue(PHANTOM, 2, HOUR);
    await project.joinMergeQueue(number, 0, 1);
    await runDurableObjectAlarm(project);
    expect(numbersIn(await project.mergeQueue())).toEqual([PHANTOM]);

    // Where it would have updated its branch it asks again: behind the phantom now, it waits, touching nothing.
    const stub = issueStub(env, loop.project, number);
    await stub.drain();
    expect(await updatesAndMerges(loop, released)).toEqual([]);
    expect(await stub.view()).toMatchObject({ state: "merging", updates: 0 });
    expect(numbersIn(await project.mergeQueue())).toEqual([PHANTOM, number]);

    await project.leaveMergeQueue(PHANTOM, 2);
    expect(await settled(loop, number)).toMatchObject({ state: "merged", updates: 1, reason: null });
  });
});

describe("merge.upToDate: when_required", () => {
  const WHEN_REQUIRED = { merge: { upToDate: "when_required" } };

  it("behind pull requests merge as they are where the base's protection does not require an up-to-date head: no update, no second CI run", async () => {
    const loop = await loopProject("up-to-date-free", WHEN_REQUIRED);
    const issues = await queued(loop, [{ "a.txt": "a\n" }, { "b.txt": "b\n" }, { "c.txt": "c\n" }]);
    const released = Date.now();
    await projectStub(env, loop.project).leaveMergeQueue(PHANTOM, 1);

    const views = await Promise.all(issues.map(({ number }) => settled(loop, number)));
    expect(views.map((v) => [v.state, v.updates, v.reason])).toEqual(views.map(() => ["merged", 0, null]));
    for (const view of views) {
      expect(applied(view)).not.toContain("branch_updated>awaiting_ci");
      expect(view.history.filter((h) => h.event === "ci" && h.outcome === "applied")).toHaveLength(1);
    }
    // Each merged at the head its one CI run passed and the critic reviewed once, one merge after the other.
    expect(views.map((v) => v.headSha)).toEqual(issues.map((i) => i.sha));
    const prs = views.map((v) => v.prNumber ?? 0);
    const writes = await updatesAndMerges(loop, released);
    expect(writes.map((w) => `${w.call} #${w.pr}`)).toEqual(prs.map((pr) => `merge #${pr}`));
    expect(await criticCallsOf(loop, issues)).toEqual([1, 1, 1]);
    // The base holds every change: the forge merged the behind heads without losing the others'.
    const files = await loop.forge.fileIds(["a.txt", "b.txt", "c.txt"], "main");
    expect([...files.keys()].sort()).toEqual(["a.txt", "b.txt", "c.txt"]);
  });

  it("where the base's protection blocks an outdated branch, each is brought up to date on its turn as under always", async () => {
    const loop = await loopProject("up-to-date-required", WHEN_REQUIRED);
    await forgeApi(loop, "POST", "/branch_protections", {
      rule_name: "main",
      block_on_outdated_branch: true,
    });
    const issues = await queued(loop, [{ "a.txt": "a\n" }, { "b.txt": "b\n" }]);
    const released = Date.now();
    await projectStub(env, loop.project).leaveMergeQueue(PHANTOM, 1);

    const views = await Promise.all(issues.map(({ number }) => settled(loop, number)));
    expect(views.map((v) => [v.state, v.updates, v.reason])).toEqual([
      ["merged", 0, null],
      ["merged", 1, null],
    ]);
    const [a, b] = views.map((v) => v.prNumber ?? 0);
    expect((await updatesAndMerges(loop, released)).map((w) => `${w.call} #${w.pr}`)).toEqual([
      `merge #${a}`,
      `update #${b}`,
      `merge #${b}`,
    ]);
  });
});

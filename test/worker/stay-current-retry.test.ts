/**
 * An update from the base whose attempt died before recording it: the forge merged the base into the
 * issue's branch, its answer was lost (a 502 from the gateway in front of it), and the effect's retry finds
 * the branch moved. The forge's history tells the update from someone's push: the retry records
 * `branch_updated` (CI and the critic again), as does a human's merge of the base by hand; a push that is not
 * a merge of the base still stops the issue.
 */
import { describe, expect, it } from "vitest";
import {
  control,
  critic,
  firstPush,
  type Loop,
  loopProject,
  mergeFirst,
  push,
  report,
  send,
  until,
} from "./support/review.ts";

const applied = (view: { history: { outcome: string; event: string; to: string }[] }) =>
  view.history.filter((h) => h.outcome === "applied").map((h) => `${h.event}>${h.to}`);

/** The issue once it waits for the human again after recording an update, or once it escalated. */
const heldAfterUpdate = (loop: Loop, number: number) =>
  until(
    loop,
    number,
    (v) =>
      v.state === "escalated" ||
      (v.state === "awaiting_approval" && v.history.some((h) => h.event === "branch_updated")),
  );

/** Another issue merged: the base moves under the others. The base's head after it. */
async function baseMoved(loop: Loop) {
  await mergeFirst(loop, { "a.txt": "a\n" });
  return loop.forge.getBranchHead("main");
}

/** An issue changing a protected path, approved by the critic: it waits for a human's approval to merge. */
async function heldForHuman(loop: Loop) {
  const held = await firstPush(loop, { ".ci/b.sh": "b\n" }, "Second change");
  await critic(loop, held.number, [report("APPROVE", "Fine too.")]);
  await until(loop, held.number, (v) => v.state === "awaiting_approval" && v.vaultItem !== null);
  return held;
}

/** The new head is the forge's merge of the old head and the base's head. */
async function expectForgeUpdate(loop: Loop, head: string, old: string, base: string | null) {
  expect(await control("commit", { repo: loop.repo, ref: head })).toMatchObject({ parents: [old, base] });
}

describe("a branch found moved by the review or the merge", () => {
  it("before the review: the retry records branch_updated, and the updated head is checked and merged", async () => {
    const loop = await loopProject("lost-update");
    await control("lose-update-answers", { repo: loop.repo, count: 1 });
    const second = await firstPush(loop, { "b.txt": "b\n" }, "Second change");
    const base = await baseMoved(loop);
    await critic(loop, second.number, [report("APPROVE", "Fine too.")]);

    const done = await until(loop, second.number, (v) => v.state === "merged" || v.state === "escalated");
    expect(done.reason).toBeNull();
    expect(applied(done).slice(-4)).toEqual([
      "branch_updated>awaiting_ci",
      "ci>awaiting_review",
      "review>merging",
      "merge_confirmed>merged",
    ]);
    expect(done).toMatchObject({ state: "merged", updates: 1 });
    await expectForgeUpdate(loop, done.headSha ?? "", second.sha, base);
  });

  it("at the merge: the retry records branch_updated instead of merging the old head", async () => {
    const loop = await loopProject("lost-merge-update");
    const second = await heldForHuman(loop);
    const base = await baseMoved(loop);
    await control("lose-update-answers", { repo: loop.repo, count: 1 });
    await critic(loop, second.number, [report("APPROVE", "Fine again.")]);
    await send(loop, second.number, { type: "human_approval", by: "alice" });

    const held = await heldAfterUpdate(loop, second.number);
    expect(held.state, held.reason ?? "").toBe("awaiting_approval");
    expect(applied(held)).toContain("branch_updated>awaiting_ci");
    expect(held.updates).toBe(1);
    await expectForgeUpdate(loop, held.headSha ?? "", second.sha, base);
  });

  it("a human who merged the base in by hand: the merge records branch_updated, as for the forge's update", async () => {
    const loop = await loopProject("hand-merge");
    const second = await heldForHuman(loop);
    const base = await baseMoved(loop);
    // Its own file as it is: the commit is the merge alone.
    const merged = await push(loop, second.number, { ".ci/b.sh": "b\n" }, { mergeBase: true });
    await critic(loop, second.number, [report("APPROVE", "Fine again.")]);
    await send(loop, second.number, { type: "human_approval", by: "alice" });

    const held = await heldAfterUpdate(loop, second.number);
    expect(held.state, held.reason ?? "").toBe("awaiting_approval");
    expect(held.headSha).toBe(merged);
    await expectForgeUpdate(loop, merged, second.sha, base);
  });

  it("a push that is not the base merged into the head still stops the issue", async () => {
    const loop = await loopProject("foreign-push");
    const second = await heldForHuman(loop);
    const foreign = await push(loop, second.number, { "c.txt": "someone else's\n" });
    await send(loop, second.number, { type: "human_approval", by: "alice" });

    const stopped = await until(
      loop,
      second.number,
      (v) => v.state === "escalated" || v.history.some((h) => h.event === "branch_updated"),
    );
    expect(applied(stopped)).not.toContain("branch_updated>awaiting_ci");
    expect(stopped.state).toBe("escalated");
    expect(stopped.headSha).toBe(second.sha);
    expect(await loop.forge.getBranchHead(`conveyor/${second.number}`)).toBe(foreign);
  });
});

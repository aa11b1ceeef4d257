/**
 * Two issues whose pull requests race to the same base on the local forge: the second is brought up to date
 * before its review (by the forge when it merges cleanly, by an update job of its own session when it
 * conflicts), and CI and the critic see the head that is merged.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { jobsOf } from "./support/jobs.ts";
import {
  control,
  critic,
  criticCalls,
  firstPush,
  type Loop,
  loopProject,
  mergeFirst,
  push,
  report,
  send,
  until,
} from "./support/review.ts";

const shaOfMain = (loop: Loop) => loop.forge.getBranchHead("main");

describe("staying current with the base on a local forge", () => {
  it("a pull request behind its base is updated by the forge, checked again and merged, without a session", async () => {
    const loop = await loopProject("behind");
    const second = await firstPush(loop, { "b.txt": "b\n" }, "Second change");
    await mergeFirst(loop, { "a.txt": "a\n" });
    const mainAfterFirst = await shaOfMain(loop);
    await critic(loop, second.number, [report("APPROVE", "Fine too.")]);

    const merged = await until(loop, second.number, (v) => v.state === "merged");
    const path = merged.history.filter((h) => h.outcome === "applied").map((h) => `${h.event}>${h.to}`);
    expect(path).toContain("branch_updated>awaiting_ci");
    expect(path.slice(path.indexOf("branch_updated>awaiting_ci"))).toEqual([
      "branch_updated>awaiting_ci",
      "ci>awaiting_review",
      "review>merging",
      "merge_confirmed>merged",
    ]);
    expect(merged).toMatchObject({ updates: 1, iteration: 1 });
    // The merged head is the forge's merge of the base into the branch, and it is the head CI and the critic saw.
    expect(merged.headSha).not.toBe(second.sha);
    const pull = await loop.forge.getPullRequest(merged.prNumber ?? 0);
    expect(pull).toMatchObject({ merged: true, headSha: merged.headSha });
    expect(
      (await jobsOf(loop.project)).filter((j) => j.number === second.number && j.kind === "update"),
    ).toEqual([]);
    const diff = await loop.forge.getPullRequestDiff(merged.prNumber ?? 0);
    expect(diff).toContain("b.txt");
    expect(mainAfterFirst).not.toBe(await shaOfMain(loop));
  });

  it.each(["always", "when_required"])(
    "a pull request merged by hand before its review is confirmed merged, not updated nor reviewed (merge.upToDate %s)",
    async (upToDate) => {
      const loop = await loopProject("by-hand", { merge: { upToDate } });
      const pushed = await firstPush(loop, { "b.txt": "b\n" }, "Merged by hand");
      const { prNumber } = await until(loop, pushed.number, (v) => v.prNumber !== null);
      // Its base now holds its head: the forge reads it as behind the base's merge commit.
      await loop.forge.mergePullRequest(prNumber ?? 0, { method: "merge" });
      await critic(loop, pushed.number, [report("APPROVE", "Fine.")]);

      const ended = await until(loop, pushed.number, (v) => v.state === "merged" || v.state === "escalated");
      const path = ended.history.filter((h) => h.outcome === "applied").map((h) => `${h.event}>${h.to}`);
      expect(path.some((step) => /^(conflict|branch_updated)>/.test(step))).toBe(false);
      expect(ended).toMatchObject({ state: "merged", updates: 0 });
      expect(await criticCalls(loop, pushed.number)).toBe(0);
    },
  );

  it("a pull request Gitea re-checks after its base moved (mergeable false a while) is not taken for a conflict", async () => {
    const loop = await loopProject("rechecked");
    // As Gitea: after a head or base moves, the pull request answers mergeable false while it is re-checked.
    await control("merge-checks", { repo: loop.repo, reads: 2 });
    const second = await firstPush(loop, { "b.txt": "b\n" }, "Second change");
    await mergeFirst(loop, { "a.txt": "a\n" });
    await critic(loop, second.number, [report("APPROVE", "Fine too.")]);

    const merged = await until(loop, second.number, (v) => v.state === "merged");
    const path = merged.history.filter((h) => h.outcome === "applied").map((h) => `${h.event}>${h.to}`);
    expect(path).toContain("branch_updated>awaiting_ci");
    expect(path.some((step) => step.startsWith("conflict>"))).toBe(false);
    expect(merged).toMatchObject({ updates: 1, iteration: 1 });
    expect(
      (await jobsOf(loop.project)).filter((j) => j.number === second.number && j.kind === "update"),
    ).toEqual([]);
  });

  it("two pull requests approved at once merge one at a time: the second is brought up to date first", async () => {
    const loop = await loopProject("together");
    // Changes to protected paths, so that both wait for a maintainer, reviewed on the same base.
    const pair = [
      await firstPush(loop, { ".ci/a.sh": "a\n" }, "First change"),
      await firstPush(loop, { ".ci/b.sh": "b\n" }, "Second change"),
    ];
    // Two verdicts each: the one brought up to date is reviewed again.
    const approve = report("APPROVE", "Fine.");
    for (const { number } of pair) await critic(loop, number, [approve, approve]);
    for (const { number } of pair) await until(loop, number, (v) => v.state === "awaiting_approval");
    // Approved at the same moment: each merge checks the base first, and a merge of one between the other's
    // check and its merge would land a head nobody checked against that base.
    await Promise.all(pair.map(({ number }) => send(loop, number, { type: "human_approval", by: "alice" })));
    const updated = await Promise.all(
      pair.map(({ number }) =>
        until(
          loop,
          number,
          (v) =>
            v.state === "merged" ||
            // Held again for the updated head, its vault item named and the human asked.
            (v.state === "awaiting_approval" &&
              v.history.some((h) => h.event === "branch_updated") &&
              v.vaultItem !== null &&
              v.outbox.length === 0),
        ),
      ),
    );
    const paths = updated.map((v) =>
      v.history.filter((h) => h.outcome === "applied").map((h) => `${h.event}>${h.to}`),
    );
    expect(paths.filter((path) => path.includes("branch_updated>awaiting_ci"))).toHaveLength(1);
    const second = pair[updated.findIndex((v) => v.state === "awaiting_approval")]?.number ?? 0;
    // The approval was for the head before the update: the maintainer is asked again, and told why.
    const asked = (await loop.forge.listComments(second)).map((c) => c.body);
    const again = asked.filter((body) => body.includes("approve the pull request again"));
    expect(again).toHaveLength(1);
    expect(again[0]).toContain("Approve the pull request (a review by a user with write access) or comment");
    await send(loop, second, { type: "human_approval", by: "alice" });
    for (const { number } of pair) {
      const view = await until(loop, number, (v) => v.state === "merged");
      // What merged is the head CI and the critic saw, on the base it was checked against.
      const pull = await loop.forge.getPullRequest(view.prNumber ?? 0);
      expect(pull).toMatchObject({ merged: true, headSha: view.headSha });
    }
    // Reviewed twice with no change requested between: rounds 1 and 2, not two first rounds.
    const { results } = await env.DB.prepare(
      "SELECT round FROM critic_reports WHERE project_id = ? AND number = ? ORDER BY at",
    )
      .bind(loop.project, second)
      .all<{ round: number }>();
    expect(results.map((r) => r.round)).toEqual([1, 2]);
  });

  it("a conflicting pull request resumes its session with an update job; its resolution is checked and merged", async () => {
    const loop = await loopProject("conflict");
    const lines = (middle: string) => `one\n${middle}\nthree\n`;
    await push(loop, 0, { "shared.txt": lines("two") }, { branch: "main" });
    const second = await firstPush(loop, { "shared.txt": lines("second's two") }, "Second change");
    await mergeFirst(loop, { "shared.txt": lines("first's two") });

    // Revising, and its update job enqueued: the state can show before the jobs lane has delivered it.
    const resolving = await until(
      loop,
      second.number,
      (v) =>
        v.state === "revising" && !v.outbox.some((o) => o.channel === "effect:enqueue_job" && o.pending > 0),
    );
    expect(resolving).toMatchObject({ updates: 1, iteration: 2 });
    const update = (await jobsOf(loop.project)).find(
      (j) => j.number === second.number && j.kind === "update",
    );
    expect(update).toMatchObject({ kind: "update", status: "queued" });

    // The session merges the base and resolves: both sides' intent on the line.
    const resolved = await push(
      loop,
      second.number,
      { "shared.txt": lines("first's and second's two") },
      {
        mergeBase: true,
      },
    );
    await critic(loop, second.number, [report("APPROVE", "Resolved well.")]);
    await send(loop, second.number, { type: "dispatched", jobId: update?.id ?? "", runnerId: "runner-1" });
    await send(loop, second.number, { type: "phase", phase: "awaiting_ci", headSha: resolved });

    const merged = await until(loop, second.number, (v) => v.state === "merged");
    expect(merged.headSha).toBe(resolved);
    const after = merged.history.slice(merged.history.findIndex((h) => h.event === "conflict"));
    expect(after.filter((h) => h.outcome === "applied").map((h) => h.to)).toEqual([
      "revising",
      "revising", // dispatched
      "awaiting_ci",
      "awaiting_review",
      "merging",
      "merged",
    ]);
    expect((await loop.forge.getPullRequest(merged.prNumber ?? 0)).headSha).toBe(resolved);
  });
});

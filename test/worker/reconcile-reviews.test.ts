/**
 * People's reviews whose webhooks never came (the Worker down, or a delivery lost): the local forge records the
 * review and delivers nothing; the next reconciliation cycle reads it back and the issue moves as the webhook
 * would have moved it. The webhook arriving late, and a second cycle, change nothing.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { projectStub } from "../../src/project-stub.ts";
import { cycle } from "./support/reconcile.ts";
import {
  control,
  critic,
  firstPush,
  forgeApi,
  forgeUser,
  loopProject,
  report,
  until,
} from "./support/review.ts";
import { reviewDelivery } from "./support/webhooks.ts";

const FILES = { "src/a.ts": "export const a = 1;\nexport const b = 2;\n" };

describe("reviews reconciled (their webhooks lost)", () => {
  it("a writer's request for changes no webhook told of sends the issue to revising at the next cycle; its late webhook and the next cycle change nothing", async () => {
    const loop = await loopProject("cron-review");
    const { number, sha } = await firstPush(loop, FILES);
    // No critic answer is queued: the critic's call keeps failing, and the issue waits in awaiting_review.
    const pr = (await until(loop, number, (v) => v.state === "awaiting_review")).prNumber ?? 0;
    const maintainer = await forgeUser(loop, "maintainer", "write");
    await maintainer.createReview(pr, {
      event: "REQUEST_CHANGES",
      body: "b must stay private.",
      comments: [{ path: "src/a.ts", line: 2, body: "Do not export b." }],
    });

    expect(await cycle(loop)).toMatchObject({ reviewReads: 1, humanReviews: 1 });
    const revising = await until(loop, number, (v) => v.state === "revising");
    expect(revising).toMatchObject({ sessionId: `sess-${number}`, criticRounds: 0 });
    const heard = revising.history.filter((h) => h.event === "pr_review");
    expect(heard).toMatchObject([{ outcome: "applied", from: "awaiting_review", cause: { kind: "cron" } }]);

    const late = await reviewDelivery(loop, pr, {
      kind: "rejected",
      by: "maintainer",
      body: "b must stay private.",
      headSha: sha,
    });
    expect(await late.json()).toMatchObject({ ignored: expect.stringContaining("already heard") });
    expect(await cycle(loop)).toMatchObject({ humanReviews: 0 });
    const after = await until(loop, number, () => true);
    expect(after.state).toBe("revising");
    expect(after.history).toEqual(revising.history);
  });

  it("two reviews of one verdict in quick succession are two, by webhook and by cycle: Forgejo's webhooks are told apart by their text", async () => {
    const loop = await loopProject("cron-two-reviews");
    const { number, sha } = await firstPush(loop, FILES);
    const pr = (await until(loop, number, (v) => v.state === "awaiting_review")).prNumber ?? 0;
    const maintainer = await forgeUser(loop, "maintainer", "write");
    for (const body of ["Name it parse.", "And keep b private."])
      await maintainer.createReview(pr, { event: "REQUEST_CHANGES", body });
    for (const body of ["Name it parse.", "And keep b private."]) {
      const delivered = await reviewDelivery(loop, pr, {
        kind: "rejected",
        by: "maintainer",
        body,
        headSha: sha,
      });
      expect(await delivered.json()).toEqual({ accepted: true, events: 1 });
    }
    expect(await cycle(loop)).toMatchObject({ reviewReads: 1, humanReviews: 0 });
    const view = await until(loop, number, (v) => v.state === "revising");
    expect(view.history.filter((h) => h.event === "pr_review")).toHaveLength(2);
  });

  it("a writer's approval no webhook told of answers a merge held for one: it merges at the next cycle", async () => {
    const loop = await loopProject("cron-approval");
    await forgeApi(loop, "POST", "/branch_protections", { rule_name: "main", required_approvals: 1 });
    const { number } = await firstPush(loop, FILES);
    await critic(loop, number, [report("APPROVE", "Good.")]);
    const held = await until(loop, number, (v) => v.state === "awaiting_approval" && v.vaultItem !== null);
    const pr = held.prNumber ?? 0;

    const maintainer = await forgeUser(loop, "maintainer", "write");
    await maintainer.createReview(pr, { event: "APPROVE", body: "Looks right." });
    // Conveyor's own reviews on the pull request (the critic's) are no person's: only the approval is heard.
    expect(await cycle(loop)).toMatchObject({ reviewReads: 1, humanReviews: 1 });
    const merged = await until(loop, number, (v) => v.state === "merged");
    expect(merged.history.find((h) => h.event === "human_approval")).toMatchObject({
      from: "awaiting_approval",
      outcome: "applied",
      cause: { kind: "cron" },
    });
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(true);
  });

  it("a merge held by a change request goes on once the review is dismissed on Forgejo, which sends no webhook for it", async () => {
    const loop = await loopProject("cron-dismissal");
    const { number } = await firstPush(loop, FILES);
    const pr = (await until(loop, number, (v) => v.prNumber !== null)).prNumber ?? 0;
    const maintainer = await forgeUser(loop, "maintainer", "write");
    const { id } = await maintainer.createReview(pr, { event: "REQUEST_CHANGES", body: "Not yet." });
    await critic(loop, number, [report("APPROVE", "Good.")]);
    await until(loop, number, (v) => v.state === "awaiting_approval" && v.outbox.length === 0);

    // An administrator dismisses the review: the forge stamps the pull request and sends no webhook.
    await forgeApi(loop, "POST", `/pulls/${pr}/reviews/${id}/dismissals`, { message: "Outdated." });

    expect(await cycle(loop)).toMatchObject({ reviewReads: 1, humanReviews: 1 });
    const merged = await until(loop, number, (v) => v.state === "merged");
    expect(merged.history.filter((h) => h.event === "pr_review")).toMatchObject([
      { from: "awaiting_approval", to: "merging", cause: { kind: "cron" } },
    ]);
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(true);
  });

  it("a pull request whose reviews cannot be read costs only itself: the other's is heard in the same cycle, its own once it reads again; a rate limit still ends the cycle", async () => {
    const loop = await loopProject("cron-review-fails");
    const first = await firstPush(loop, FILES, "First change");
    const second = await firstPush(loop, { "src/c.ts": "export const c = 3;\n" }, "Second change");
    const waiting = async (number: number) =>
      (await until(loop, number, (v) => v.state === "awaiting_review")).prNumber ?? 0;
    const failing = await waiting(first.number);
    const read = await waiting(second.number);
    const maintainer = await forgeUser(loop, "maintainer", "write");
    for (const pr of [failing, read])
      await maintainer.createReview(pr, { event: "REQUEST_CHANGES", body: "No." });
    const failReads = (fault: object | null) =>
      control("fail-reads", { repo: loop.repo, path: `/pulls/${failing}/reviews`, fault });

    // A rate limit is the forge's answer to every read: the cycle ends, its cursor where it was.
    await failReads({ kind: "rate-limited", retryAfterSeconds: 0 });
    const limited = await projectStub(env, loop.project).reconcileNow(loop.project);
    expect(limited).toMatchObject({ error: expect.stringContaining("rate limit") });

    // Gone (a 404, as for a pull request deleted meanwhile): the other's review is heard all the same.
    await failReads({ kind: "missing" });
    expect(await cycle(loop)).toMatchObject({ failed: 1 });
    await until(loop, second.number, (v) => v.state === "revising");
    expect((await until(loop, first.number, () => true)).state).toBe("awaiting_review");

    // Readable again: the next cycle reads it, though the forge lists nothing new.
    await failReads(null);
    expect(await cycle(loop)).toMatchObject({ failed: 0, humanReviews: 1 });
    const heard = await until(loop, first.number, (v) => v.state === "revising");
    expect(heard.history.filter((h) => h.event === "pr_review")).toMatchObject([
      { outcome: "applied", from: "awaiting_review", cause: { kind: "cron" } },
    ]);
    expect(await cycle(loop)).toMatchObject({ failed: 0, humanReviews: 0 });
  });
});

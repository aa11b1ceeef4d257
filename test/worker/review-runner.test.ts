/**
 * The critic on a runner (`critic.runsOn: runner`): the issue's review is a run of the `reviewer` agent, which
 * a runner completes with a `submit_review`; the Worker has no ANTHROPIC_API_KEY and calls no model. Real parts: the local forge with its
 * CI, the Worker's Durable Objects, the runner API.
 */

import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Deliverer } from "../../durable-objects/issue/effects/deliverers.ts";
import { REVIEW_DELIVERERS } from "../../durable-objects/issue/effects/review.ts";
import type { IssueView } from "../../src/contracts/issue-object.ts";
import { CURRENT_TEXT_NOTE } from "../../src/domain/judged-brief.ts";
import { createForgeClient } from "../../src/forge/client/index.ts";
import { projectStub } from "../../src/project-stub.ts";
import type { Claim } from "../../src/runner-api/contract.ts";
import { postStatus, statusPayload } from "./support/ci.ts";
import { call, claim, complete, drain, jobsOf, newRunner, type Runner } from "./support/jobs.ts";
import {
  control,
  criticCalls,
  EDITED_BODY,
  firstPush,
  GREEN_CI,
  type Loop,
  loopProject,
  push,
  queuedThenEdited,
  services,
  until,
} from "./support/review.ts";
import { deliver, pullRequestDelivery } from "./support/webhooks.ts";

const ON_RUNNER = { critic: { runsOn: "runner" } };
const ON_PUSH = { critic: { reviewHumanPullRequests: true }, reviews: { people: "on_push" } };

/** The issue waits for its review, and the reviewer's run waits for a runner. */
const awaitingReview = (view: IssueView) =>
  view.state === "awaiting_review" &&
  !view.outbox.some((o) => o.channel === "effect:request_review" && o.pending > 0);

/** The reviewer's job, as a runner claims it (the issue's own first job is taken by another runner first). */
async function reviewerJob(loop: Loop, name: string): Promise<{ runner: Runner; claimed: Claim }> {
  const runners = [await newRunner(`${name}-0`), await newRunner(`${name}-1`)];
  for (const runner of runners) {
    const claimed = await claim(runner, [loop.project]);
    if (claimed?.job.kind === "agent") return { runner, claimed };
  }
  throw new Error("no reviewer job was queued");
}

const review = (pr: number, verdict: string, summary: string, findings: object[] = []) => ({
  type: "submit_review",
  pr,
  verdict,
  summary,
  findings,
});

const runOf = async (loop: Loop, runId: string) => {
  const run = await projectStub(env, loop.project).agentRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  return run;
};

describe("the critic on a runner", () => {
  // The Worker holds no model key: a project whose only model access is the runner's needs none.
  const bindings = env as unknown as Record<string, unknown>;
  const apiKey = bindings.ANTHROPIC_API_KEY;
  beforeAll(() => {
    delete bindings.ANTHROPIC_API_KEY;
  });
  afterAll(() => {
    bindings.ANTHROPIC_API_KEY = apiKey;
  });

  it("reviews the head CI passed, and the issue moves on exactly once even when the completion comes twice", async () => {
    const loop = await loopProject("rr-approve", ON_RUNNER);
    const { number, sha } = await firstPush(loop, {
      "src/parser.ts": "export const parse = (s: string) => s.split(',');\n",
      "ci.sh": GREEN_CI,
    });
    const waiting = await until(loop, number, awaitingReview);
    const pr = waiting.prNumber ?? 0;
    // The request delivered again under its key (a lost acknowledgement) queues no second run.
    const reviewJobs = async () => (await jobsOf(loop.project)).filter((j) => j.kind === "agent").length;
    expect(await reviewJobs()).toBe(1);
    const key = `${loop.project}#${number}:${waiting.history.find((h) => h.to === "awaiting_review" && h.event === "ci")?.seq}:0`;
    const again = REVIEW_DELIVERERS.request_review as Deliverer<"request_review">;
    expect(
      await again({ kind: "request_review" }, { env, key, issue: waiting, recheck: () => null }),
    ).toBeUndefined();
    expect(await reviewJobs()).toBe(1);

    const { runner, claimed } = await reviewerJob(loop, "rr-approve");
    const agent = claimed.job.agent;
    expect(agent).toMatchObject({ name: "reviewer", outputs: ["submit_review"] });
    expect(agent?.review).toMatchObject({ pr, headSha: sha, ref: `refs/heads/conveyor/${number}` });
    expect(agent?.review?.diff).toContain("+export const parse");
    expect(JSON.parse(agent?.review?.pullRequest ?? "{}")).toMatchObject({
      pullRequest: { number: pr, head: sha },
      issue: { number, title: "Add the parser" },
    });
    expect(agent?.prompt).toContain(`the working directory is pull request #${pr} at ${sha}`);

    const usage = { inputTokens: 900, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0, turns: 3 };
    const done = {
      phase: "done",
      outputs: [review(pr, "APPROVE", "Splits the input as asked.")],
      usage: { ...usage, usd: 0.25 },
    };
    expect((await complete(runner, claimed, done)).status).toBe(204);
    // Delivered twice (a lost answer): applied once.
    expect((await complete(runner, claimed, done)).status).toBe(204);
    await drain(loop.project);
    await drain(loop.project);

    const merged = await until(loop, number, (v) => v.state === "merged");
    expect(merged.history.filter((h) => h.event === "review")).toHaveLength(1);
    const reviews = await loop.forge.listReviews(pr);
    expect(reviews.filter((r) => r.body.includes("**Critic: APPROVE**"))).toHaveLength(1);
    // The Worker never asked a model: the review came from the runner.
    expect(await criticCalls(loop, number)).toBe(0);
    // Kept in the critic ledger like the Worker critic's, under the request's key.
    const ledger = await env.DB.prepare(
      "SELECT id, round, head_sha AS headSha, verdict FROM critic_reports WHERE project_id = ? AND number = ?",
    )
      .bind(loop.project, number)
      .all();
    expect(ledger.results).toEqual([{ id: key, round: 1, headSha: sha, verdict: "APPROVE" }]);
    const run = await runOf(loop, agent?.runId ?? "");
    expect(run.decisions?.map((d) => [d.status, d.applied ?? false])).toEqual([["accepted", true]]);
    // The reviewer's spend is the run's, and the issue's it reviewed.
    expect(run.costUsd).toBe(0.25);
    expect(await projectStub(env, loop.project).issueSpendUsd(number)).toBe(0.25);
    const spent = await env.DB.prepare("SELECT number, source, usd FROM usage WHERE project_id = ?")
      .bind(loop.project)
      .all();
    expect(spent.results).toEqual([{ number, source: "reviewer", usd: 0.25 }]);
  });

  it("gives the reviewer the brief a writer queued as the issue; an edit after queueing is context, marked so", async () => {
    const loop = await loopProject("rr-brief", ON_RUNNER);
    const files = { "src/parser.ts": "export {};\n", "ci.sh": GREEN_CI };
    const { number } = await queuedThenEdited(loop, files);
    await until(loop, number, awaitingReview);
    const { claimed } = await reviewerJob(loop, "rr-brief");
    expect(JSON.parse(claimed.job.agent?.review?.pullRequest ?? "{}")).toMatchObject({
      issue: {
        number,
        title: "Add the parser",
        body: "Parse comma-separated input.",
        queuedBy: "maintainer",
      },
      currentIssueText: { note: CURRENT_TEXT_NOTE, title: "Add the parser", body: EDITED_BODY },
    });
  });

  it("drops a review of a head that moved since: no review on the forge, the issue hears nothing", async () => {
    const loop = await loopProject("rr-stale", ON_RUNNER);
    const { number } = await firstPush(loop, {
      "src/parser.ts": "export const parse = 1;\n",
      "ci.sh": GREEN_CI,
    });
    const pr = (await until(loop, number, awaitingReview)).prNumber ?? 0;
    const { runner, claimed } = await reviewerJob(loop, "rr-stale");
    // A new push while the reviewer looked at the old head.
    await push(loop, number, { "src/parser.ts": "export const parse = 2;\n" });

    const done = { phase: "done", outputs: [review(pr, "APPROVE", "Fine.")] };
    expect((await complete(runner, claimed, done)).status).toBe(204);
    await drain(loop.project);
    await drain(loop.project);

    const run = await runOf(loop, claimed.job.agent?.runId ?? "");
    expect(run.decisions?.[0]?.failed).toMatch(/^stale: the pull request's head is /);
    expect(await loop.forge.listReviews(pr)).toEqual([]);
    const view = await until(loop, number, () => true);
    expect(view.state).toBe("awaiting_review");
    expect(view.history.some((h) => h.event === "review" || h.event === "review_failed")).toBe(false);
  });

  it("a run without a valid review fails the review: escalated, never read as APPROVE", async () => {
    const loop = await loopProject("rr-invalid", ON_RUNNER);
    const { number } = await firstPush(loop, {
      "src/parser.ts": "export const parse = 1;\n",
      "ci.sh": GREEN_CI,
    });
    const pr = (await until(loop, number, awaitingReview)).prNumber ?? 0;
    const { runner, claimed } = await reviewerJob(loop, "rr-invalid");

    // A malformed review never passes the runner API's boundary.
    const malformed = { phase: "done", outputs: [review(pr, "LGTM", "Ship it.")] };
    expect((await complete(runner, claimed, malformed)).status).toBe(400);
    // A review of another pull request is refused by the checks, which leaves the run without a review.
    const elsewhere = { phase: "done", outputs: [review(pr + 100, "APPROVE", "Ship it.")] };
    expect((await complete(runner, claimed, elsewhere)).status).toBe(204);
    await drain(loop.project);
    await drain(loop.project);

    const escalated = await until(loop, number, (v) => v.state === "escalated");
    expect(escalated.reason).toContain("a review only of the pull request the run is about");
    expect(escalated.history.filter((h) => h.event === "review_failed")).toHaveLength(1);
    expect(escalated.history.some((h) => h.event === "review")).toBe(false);
    expect(await loop.forge.listReviews(pr)).toEqual([]);
    expect(await criticCalls(loop, number)).toBe(0);
  });

  it("a review the repository's reviewer marks dangerous waits in the vault; rejected there, the review fails", async () => {
    const loop = await loopProject("rr-vault", ON_RUNNER);
    await control("push", {
      repo: loop.repo,
      branch: "main",
      files: {
        ".conveyor/agents/reviewer.md":
          "---\ndescription: A held reviewer.\non: [pull_request.opened]\noutputs:\n  submit_review: { max: 1, dangerous: true }\n---\nReview the pull request.\n",
      },
    });
    const { number } = await firstPush(loop, {
      "src/parser.ts": "export const parse = 1;\n",
      "ci.sh": GREEN_CI,
    });
    const pr = (await until(loop, number, awaitingReview)).prNumber ?? 0;
    const { runner, claimed } = await reviewerJob(loop, "rr-vault");
    const done = { phase: "done", outputs: [review(pr, "APPROVE", "Ship it.")] };
    expect((await complete(runner, claimed, done)).status).toBe(204);
    await drain(loop.project);
    await drain(loop.project);

    // Held: no review on the forge, the issue still waits for one.
    const run = await runOf(loop, claimed.job.agent?.runId ?? "");
    const itemId = run.decisions?.[0]?.vault ?? "";
    expect(run.decisions?.[0]).toMatchObject({ status: "accepted", vault: "v1" });
    expect(await loop.forge.listReviews(pr)).toEqual([]);
    expect((await until(loop, number, awaitingReview)).state).toBe("awaiting_review");

    const stub = projectStub(env, loop.project);
    const rejected = await stub.vaultDecide(itemId, {
      decision: "reject",
      by: "operator",
      reason: "not now",
    });
    expect(rejected.ok).toBe(true);
    await drain(loop.project);
    const escalated = await until(loop, number, (v) => v.state === "escalated");
    expect(escalated.reason).toContain(`the vault rejected it (${itemId}, by operator): not now`);
    expect(escalated.history.filter((h) => h.event === "review_failed")).toHaveLength(1);
    expect(await loop.forge.listReviews(pr)).toEqual([]);
  });

  it("a reviewer run that fails for good fails the review once", async () => {
    const loop = await loopProject("rr-failed", ON_RUNNER);
    const { number } = await firstPush(loop, {
      "src/parser.ts": "export const parse = 1;\n",
      "ci.sh": GREEN_CI,
    });
    await until(loop, number, awaitingReview);
    const { runner, claimed } = await reviewerJob(loop, "rr-failed");
    const failed = { leaseToken: claimed.leaseToken, error: "the model refused", retryable: false };
    expect((await call(runner, `jobs/${claimed.job.id}/fail`, failed)).status).toBe(204);
    expect((await call(runner, `jobs/${claimed.job.id}/fail`, failed)).status).toBe(204);
    await drain(loop.project);

    const escalated = await until(loop, number, (v) => v.state === "escalated");
    expect(escalated.reason).toBe(
      "the critic failed: the reviewer's run failed: runner failed: the model refused",
    );
    expect(escalated.history.filter((h) => h.event === "review_failed")).toHaveLength(1);
  });
});

describe("the reviewer on people's pull requests", () => {
  it("reviews a person's pull request at its head, once, with a forge review only; Conveyor's are the critic's", async () => {
    const loop = await loopProject("rr-human", ON_PUSH);
    const { forge, pr, head, alice } = await personsPullRequest(loop, "alice-rr");

    // Conveyor's own pull request, pushed to by its runner's account: not this reviewer's.
    await push(loop, 77, { "src/other.js": "export {};\n" });
    const ours = await loop.forge.createPullRequest({
      head: "conveyor/77",
      base: "main",
      title: "#77",
      body: "",
    });
    const sync = { number: ours.number, author: "conveyor", sender: "conveyor-runner" };
    expect((await pullRequestDelivery(loop, "synchronized", sync)).status).toBe(202);
    const opened = { number: pr, author: alice.login, sender: alice.login };
    expect((await pullRequestDelivery(loop, "opened", opened)).status).toBe(202);

    const runner = await newRunner("rr-human-0");
    const claimed = await claim(runner, [loop.project]);
    const agent = claimed?.job.agent;
    expect(agent).toMatchObject({ name: "reviewer" });
    expect(agent?.review).toMatchObject({ pr, headSha: head, ref: `refs/pull/${pr}/head` });
    expect(agent?.review?.diff).toContain("+export const shout");
    // One run only: none for Conveyor's pull request.
    expect(await claim(await newRunner("rr-human-1"), [loop.project])).toBeNull();
    if (!claimed) return;

    const finding = {
      severity: "minor",
      file: "src/shout.js",
      line: 1,
      comment: "One is enough.",
      inScope: true,
    };
    const done = { phase: "done", outputs: [review(pr, "REQUEST_CHANGES", "Too loud.", [finding])] };
    expect((await complete(runner, claimed, done)).status).toBe(204);
    expect((await complete(runner, claimed, done)).status).toBe(204);
    await drain(loop.project);
    await drain(loop.project);

    const reviews = await forge.listReviews(pr);
    expect(reviews.map((r) => r.body.split("\n")[0])).toEqual(["**Critic: REQUEST_CHANGES**"]);
    expect(await reviewStates(loop, pr)).toEqual(["COMMENT"]);
    expect((await runOf(loop, agent?.runId ?? "")).decisions?.[0]).toMatchObject({ applied: true });
  });

  it("posts a person's pull request's APPROVE as a comment review: no approval a branch protection counts", async () => {
    const loop = await loopProject("rr-advice", ON_PUSH);
    const { pr, alice } = await personsPullRequest(loop, "alice-ra");
    const opened = { number: pr, author: alice.login, sender: alice.login };
    expect((await pullRequestDelivery(loop, "opened", opened)).status).toBe(202);
    const runner = await newRunner("rr-advice-0");
    const claimed = await claim(runner, [loop.project]);
    if (!claimed) throw new Error("no reviewer job was queued");

    const done = { phase: "done", outputs: [review(pr, "APPROVE", "Looks right.")] };
    expect((await complete(runner, claimed, done)).status).toBe(204);
    await drain(loop.project);

    expect(await reviewStates(loop, pr)).toEqual(["COMMENT"]);
  });
});

describe("people's pull requests reviewed after CI (the default)", () => {
  const AFTER_CI = { critic: { reviewHumanPullRequests: true } };
  const status = (loop: Loop, sha: string, context: string, state: string) =>
    deliver(
      loop.project,
      { forge: "gitea", event: { grouped: "", type: "status" } },
      statusPayload(loop, sha, context, state),
    );

  it("reviews the newest push once CI has judged it, once, whatever else asks", async () => {
    const loop = await loopProject("rr-after-ci", AFTER_CI, { kind: "gitea", forgeCi: false });
    const { pr, head: first, alice } = await personsPullRequest(loop, "alice-ac");
    const runner = await newRunner("rr-after-ci-0");
    expect((await pullRequestDelivery(loop, "opened", { number: pr, author: alice.login })).ok).toBe(true);
    await postStatus(loop, first, { context: "ci/woodpecker/pr/test", state: "pending" });
    expect((await status(loop, first, "ci/woodpecker/pr/test", "pending")).ok).toBe(true);
    // No verdict yet: nothing to review.
    expect(await claim(runner, [loop.project])).toBeNull();

    // A newer push before the verdict: CI's word on the older head starts nothing.
    const second = await push(loop, 0, { "src/shout.js": "export const shout = (s) => s + '!';\n" }, SHOUT);
    const sync = { number: pr, author: alice.login };
    expect((await pullRequestDelivery(loop, "synchronized", sync)).ok).toBe(true);
    await postStatus(loop, first, { context: "ci/woodpecker/pr/test", state: "success" });
    expect(await (await status(loop, first, "ci/woodpecker/pr/test", "success")).json()).toMatchObject({
      ignored: `no issue waits for CI on ${first}`,
    });
    expect(await claim(runner, [loop.project])).toBeNull();

    // CI judges the newest head (red counts: the reviewer reads CI's findings too): reviewed there, once.
    await postStatus(loop, second, { context: "ci/woodpecker/pr/test", state: "failure" });
    expect(await (await status(loop, second, "ci/woodpecker/pr/test", "failure")).json()).toMatchObject({
      accepted: true,
    });
    await postStatus(loop, second, { context: "ci/woodpecker/pr/lint", state: "success" });
    expect((await status(loop, second, "ci/woodpecker/pr/lint", "success")).ok).toBe(true);
    expect((await pullRequestDelivery(loop, "synchronized", sync)).ok).toBe(true);
    await projectStub(env, loop.project).reconcileNow(loop.project);
    const claimed = await claim(runner, [loop.project]);
    expect(claimed?.job.agent).toMatchObject({ name: "reviewer" });
    expect(claimed?.job.agent?.review).toMatchObject({ pr, headSha: second });
    expect(await claim(await newRunner("rr-after-ci-1"), [loop.project])).toBeNull();
  });

  it("recovers a review whose CI webhook was lost, at the next reconciliation", async () => {
    const loop = await loopProject("rr-after-ci-lost", AFTER_CI, { kind: "gitea", forgeCi: false });
    const { pr, head } = await personsPullRequest(loop, "alice-lost");
    // Neither the pull request's nor CI's webhook arrives.
    await postStatus(loop, head, { context: "ci/woodpecker/pr/test", state: "success" });
    const runner = await newRunner("rr-after-ci-lost-0");
    expect(await claim(runner, [loop.project])).toBeNull();

    const outcome = await projectStub(env, loop.project).reconcileNow(loop.project);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ reviews: 1 });
    const claimed = await claim(runner, [loop.project]);
    expect(claimed?.job.agent?.review).toMatchObject({ pr, headSha: head });
    expect(await projectStub(env, loop.project).reconcileNow(loop.project)).toMatchObject({ reviews: 0 });
  });
});

const SHOUT = { branch: "shout" };

/** A person with write access opens a pull request changing one file, on a branch of their own. */
async function personsPullRequest(loop: Loop, login: string) {
  const alice = await control<{ login: string; token: string }>("user", {
    repo: loop.repo,
    login,
    level: "write",
  });
  const head = await push(loop, 0, { "src/shout.js": "export const shout = (s) => s + '!!';\n" }, SHOUT);
  const forge = createForgeClient({
    forge: "forgejo",
    apiUrl: services.forgeApiUrl,
    repo: loop.repo,
    token: alice.token,
  });
  const { number: pr } = await forge.createPullRequest({
    head: "shout",
    base: "main",
    title: "Shout",
    body: "",
  });
  return { forge, pr, head, alice };
}

/** The reviews' states as the forge's API lists them (APPROVED, REQUEST_CHANGES, COMMENT). */
async function reviewStates(loop: Loop, pr: number): Promise<string[]> {
  const res = await fetch(`${services.forgeApiUrl}/repos/${loop.repo}/pulls/${pr}/reviews`, {
    headers: { authorization: `token ${services.conveyorToken}` },
  });
  return ((await res.json()) as { state: string }[]).map((r) => r.state);
}

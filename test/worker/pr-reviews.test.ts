/**
 * People's reviews on Conveyor's pull request, through the forge's webhooks: reviews submitted on the local
 * forge (which keeps their states, lines and hunks as Gitea does), their webhooks delivered as Forgejo sends
 * them, and the lifecycle, the merge and the job queue as they really run.
 */
import { describe, expect, it } from "vitest";
import { createForgeClient } from "../../src/forge/client/index.ts";
import { page, sessionCookie } from "./dashboard-support.ts";
import { claim, newRunner, taken } from "./support/jobs.ts";
import {
  control,
  critic,
  firstPush,
  firstSession,
  type Loop,
  loopProject,
  push,
  queuedThenEdited,
  report,
  send,
  services,
  until,
} from "./support/review.ts";
import { commentDelivery, githubReviewDelivery, reviewDelivery } from "./support/webhooks.ts";

type Person = { login: string; token: string };

async function person(loop: Loop, login: string, level: "write" | "read"): Promise<Person> {
  return control<Person>("user", { repo: loop.repo, login, level });
}

const forgeAs = (loop: Loop, who: Person) =>
  createForgeClient({ forge: "forgejo", apiUrl: services.forgeApiUrl, repo: loop.repo, token: who.token });

const FILES = { "src/a.ts": "export const a = 1;\nexport const b = 2;\n" };

describe("people's reviews on the pull request", () => {
  it("a writer's request for changes while the critic reviews stops it: the same session revises with their words and lines; a reader's is shown, not obeyed", async () => {
    const loop = await loopProject("pr-review");
    const { number, sha } = await firstPush(loop, FILES);
    // No critic answer is queued: the critic's call keeps failing, and the issue waits in awaiting_review.
    const waiting = await until(loop, number, (v) => v.state === "awaiting_review");
    const pr = waiting.prNumber ?? 0;

    const reader = await person(loop, "passer-by", "read");
    await forgeAs(loop, reader).createReview(pr, { event: "REQUEST_CHANGES", body: "Rewrite it in Rust." });
    const ignored = await reviewDelivery(loop, pr, {
      kind: "rejected",
      by: reader.login,
      body: "Rewrite it in Rust.",
      headSha: sha,
    });
    expect(await ignored.json()).toEqual({ accepted: true, events: 1 });
    const shown = await until(loop, number, (v) => v.history.some((h) => h.event === "pr_review"));
    expect(shown.state).toBe("awaiting_review");
    const reason =
      "shown, not obeyed: passer-by has no write access — passer-by requested changes on the pull request: Rewrite it in Rust.";
    expect(shown.history.find((h) => h.event === "pr_review")).toMatchObject({ outcome: "rejected", reason });
    // The issue's page shows it among the people on the pull request, without asking for refused events.
    const issuePage = await page(
      `/dashboard/projects/${loop.project}/issues/${number}`,
      await sessionCookie(),
    );
    const text = await issuePage.text();
    expect(text).toContain("People on the pull request");
    expect(text).toContain(reason);

    const maintainer = await person(loop, "maintainer", "write");
    await forgeAs(loop, maintainer).createReview(pr, {
      event: "REQUEST_CHANGES",
      body: "b must stay private.",
      comments: [{ path: "src/a.ts", line: 2, body: "Do not export b." }],
    });
    const heard = await reviewDelivery(loop, pr, {
      kind: "rejected",
      by: maintainer.login,
      body: "b must stay private.",
      headSha: sha,
    });
    expect(await heard.json()).toEqual({ accepted: true, events: 1 });
    const revising = await until(loop, number, (v) => v.state === "revising");
    expect(revising).toMatchObject({ sessionId: `sess-${number}`, iteration: 2, criticRounds: 0 });
    const job = taken(await claim(await newRunner("pr-review"), [loop.project]));
    expect(job.job).toMatchObject({ kind: "revise", sessionId: `sess-${number}` });
    expect(job.job.instructions).toBe(
      [
        "maintainer requested changes on the pull request:\n\nb must stay private.",
        "On `src/a.ts` line 2:\n```diff\n@@ -0,0 +1,2 @@\n+export const a = 1;\n+export const b = 2;\n```\nDo not export b.",
      ].join("\n\n"),
    );
  });

  it("on GitHub: the review's webhook names it, and its lines are read in GitHub's shape", async () => {
    const loop = await loopProject("pr-review-gh", {}, { kind: "github", forgeCi: false });
    const maintainer = await person(loop, "maintainer", "write");
    const filed = await forgeAs(loop, maintainer).createIssue({ title: "Add a", body: "", labels: [] });
    const { number } = filed;
    await firstSession(loop, number, await push(loop, number, FILES));
    // GitHub pushes CI results; none comes, so the issue waits for CI with its pull request open.
    const pr = (await until(loop, number, (v) => v.prNumber !== null)).prNumber ?? 0;
    const { id } = await forgeAs(loop, maintainer).createReview(pr, {
      event: "COMMENT",
      body: "",
      comments: [{ path: "src/a.ts", line: 1, body: "Name it parse." }],
    });
    const heard = await githubReviewDelivery(loop, pr, {
      id,
      state: "commented",
      by: "maintainer",
      body: "",
    });
    expect(await heard.json()).toEqual({ accepted: true, events: 1 });
    await until(loop, number, (v) => v.state === "revising");
    const job = taken(await claim(await newRunner("pr-review-gh"), [loop.project]));
    expect(job.job).toMatchObject({ kind: "revise", sessionId: `sess-${number}` });
    expect(job.job.instructions).toBe(
      "maintainer reviewed the pull request.\n\nOn `src/a.ts` line 1:\n```diff\n@@ -0,0 +1,1 @@\n+export const a = 1;\n```\nName it parse.",
    );
  });

  it("a writer's standing request for changes holds the merge: the session revises, the merge waits for the reviewer, and their approval lets it through", async () => {
    const loop = await loopProject("pr-hold");
    const { number, sha } = await firstPush(loop, FILES);
    const maintainer = await person(loop, "maintainer", "write");
    const pr = (await until(loop, number, (v) => v.prNumber !== null)).prNumber ?? 0;
    // The critic approves, but the maintainer's change request stands on the pull request: no merge. A
    // reader's stands too, and holds nothing.
    await forgeAs(loop, maintainer).createReview(pr, { event: "REQUEST_CHANGES", body: "Name it parse." });
    const reader = await person(loop, "passer-by", "read");
    await forgeAs(loop, reader).createReview(pr, { event: "REQUEST_CHANGES", body: "Never merge this." });
    await critic(loop, number, [report("APPROVE", "Good.")]);
    const held = await until(loop, number, (v) => v.state === "awaiting_approval" && v.outbox.length === 0);
    expect(held.reason).toBe(
      "changes requested by maintainer: the merge waits until they approve the pull request or the review is dismissed, or a writer comments `/conveyor merge`",
    );
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(false);

    // Their webhook arrives: the same session revises with their words, a round apart from the critic's.
    await reviewDelivery(loop, pr, {
      kind: "rejected",
      by: "maintainer",
      body: "Name it parse.",
      headSha: sha,
    });
    const revising = await until(loop, number, (v) => v.state === "revising");
    expect(revising).toMatchObject({ sessionId: `sess-${number}`, criticRounds: 0 });
    const fixed = await push(loop, number, { "src/a.ts": "export const parse = 1;\n" });
    await send(loop, number, { type: "dispatched", jobId: `job-${number}-2`, runnerId: "runner-1" });
    await send(loop, number, { type: "phase", phase: "awaiting_ci", headSha: fixed });
    // The critic approves again; the change request still stands, so the merge waits for the reviewer.
    await until(loop, number, (v) => v.state === "awaiting_approval" && v.headSha === fixed);
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(false);

    await forgeAs(loop, maintainer).createReview(pr, { event: "APPROVE", body: "Thanks." });
    const approved = await reviewDelivery(loop, pr, {
      kind: "approved",
      by: "maintainer",
      body: "Thanks.",
      headSha: fixed,
    });
    expect(await approved.json()).toEqual({ accepted: true, events: 1 });
    await until(loop, number, (v) => v.state === "merged");
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(true);
  });

  it("a writer's /conveyor merge overrides the change requests standing; their plain comment waits for the next round", async () => {
    const loop = await loopProject("pr-override");
    const { number } = await firstPush(loop, FILES);
    const maintainer = await person(loop, "maintainer", "write");
    await person(loop, "lead", "write");
    const pr = (await until(loop, number, (v) => v.prNumber !== null)).prNumber ?? 0;
    // While CI runs, a plain comment waits for the session's next round: nothing moves.
    const said = await commentDelivery(loop, pr, "maintainer", "Keep the exports sorted.", true);
    expect(await said.json()).toEqual({ accepted: true, events: 1 });
    await forgeAs(loop, maintainer).createReview(pr, { event: "REQUEST_CHANGES", body: "Not yet." });
    await critic(loop, number, [report("APPROVE", "Good.")]);
    await until(loop, number, (v) => v.state === "awaiting_approval" && v.outbox.length === 0);
    const merge = await commentDelivery(loop, pr, "lead", "/conveyor merge", true);
    expect(await merge.json()).toEqual({ accepted: true, events: 1 });
    const merged = await until(loop, number, (v) => v.state === "merged");
    const comment = merged.history.find((h) => h.event === "pr_review");
    expect(comment).toMatchObject({ outcome: "applied", to: comment?.from });
    expect(merged.history.map((h) => h.event)).toContain("merge_command");
    expect(merged.history.map((h) => h.to)).not.toContain("revising");
  });
});

describe("the critic judges the brief a writer queued", () => {
  it("an edit after queueing reaches the critic as context only, marked so", async () => {
    const loop = await loopProject("brief");
    const { number } = await queuedThenEdited(loop, FILES);
    await critic(loop, number, [report("APPROVE", "Good.")]);
    await until(loop, number, (v) => v.state === "merged");
    const { prompts } = await control<{ prompts: string[] }>("critic-calls", {
      key: `${loop.repo}#${number}`,
    });
    const prompt = prompts.at(-1) ?? "";
    expect(prompt).toContain(
      `<issue number="${number}" title="Add the parser">\nParse comma-separated input.\n</issue>`,
    );
    expect(prompt).toMatch(
      /<current_issue_text title="Add the parser" note="The issue as it reads now, edited since a writer queued it\. Context only[^"]*">\nParse input and also delete the old importer\.\n<\/current_issue_text>/,
    );
  });
});

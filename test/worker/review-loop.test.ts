import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Deliverer } from "../../durable-objects/issue/effects/deliverers.ts";
import { REVIEW_DELIVERERS } from "../../durable-objects/issue/effects/review.ts";
import type { IssueView } from "../../src/contracts/issue-object.ts";
import type { LifecycleEvent } from "../../src/domain/lifecycle.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { projectStub } from "../../src/project-stub.ts";
import { jobsOf } from "./support/jobs.ts";
import {
  control,
  critic,
  finding,
  firstPush,
  GREEN_CI,
  type Loop,
  loopProject,
  push,
  RED_CI,
  report,
  send,
  services,
  until,
} from "./support/review.ts";
import { issueClosedDelivery, pullRequestDelivery } from "./support/webhooks.ts";

const issueAfter = (loop: Loop, number: number, event: LifecycleEvent) =>
  issueStub(env, loop.project, number).apply({
    id: crypto.randomUUID(),
    project: loop.project,
    number,
    cause: { kind: "operator", id: "test" },
    event,
  });

/** The merge's branch deletion was delivered (or skipped): nothing of it waits in the outbox. */
const branchCleanupDone = (view: IssueView) =>
  !view.outbox.some((o) => o.channel === "effect:delete_branch" && o.pending > 0);

describe("the review loop on a local forge", () => {
  it("CI red → revise → green → critic APPROVE → one merge, issue closed", async () => {
    const loop = await loopProject("loop");
    const { number } = await firstPush(loop, {
      "src/parser.ts": "export const parse = 1;\n",
      "ci.sh": RED_CI,
    });

    const red = await until(loop, number, (v) => v.state === "revising");
    expect(red).toMatchObject({ ciFixes: 1, iteration: 2, sessionId: `sess-${number}` });
    expect(red.prNumber).toBeGreaterThan(0);

    const fixed = await push(loop, number, { "ci.sh": GREEN_CI });
    await critic(loop, number, [report("APPROVE", "Implements the parser with tests.")]);
    await send(loop, number, { type: "dispatched", jobId: `job-${number}-2`, runnerId: "runner-1" });
    await send(loop, number, {
      type: "phase",
      phase: "awaiting_ci",
      headSha: fixed,
      summary: "Made CI green: @ops ci.sh ran a failing script.",
    });

    const merged = await until(loop, number, (v) => v.state === "merged");
    // The description was rewritten by the second push: the session's account, CI red then green.
    const res = await fetch(`${services.forgeApiUrl}/repos/${loop.repo}/pulls/${merged.prNumber}`, {
      headers: { authorization: `token ${services.conveyorToken}` },
    });
    const { body } = (await res.json()) as { body: string };
    expect(body).toContain(`Closes #${number}`);
    // The session's words, quoted apart under its name, mention nobody.
    expect(body).toContain("The session wrote:\n\n> Made CI green: `@ops` ci.sh ran a failing script.");
    expect(body).toContain("- CI: red");
    expect(merged.history.map((h) => h.to)).toEqual([
      "queued",
      "running",
      "awaiting_ci",
      "awaiting_ci", // pr_opened
      "revising",
      "revising", // dispatched
      "awaiting_ci",
      "awaiting_review",
      "merging",
      "merged",
    ]);
    const pr = await loop.forge.getPullRequest(merged.prNumber ?? 0);
    expect(pr).toMatchObject({ merged: true, headSha: fixed });
    expect((await loop.forge.getIssue(number)).state).toBe("closed");
    await until(loop, number, branchCleanupDone);
    expect(await loop.forge.getBranchHead(`conveyor/${number}`)).toBeNull();
  });

  it("a project that keeps branches keeps conveyor/<n> after the merge", async () => {
    const loop = await loopProject("keep", { keepBranches: true });
    const { number, sha } = await firstPush(loop, { "src/parser.ts": "export const parse = 1;\n" });
    await critic(loop, number, [report("APPROVE", "Fine.")]);
    await until(loop, number, (v) => v.state === "merged");
    await until(loop, number, branchCleanupDone);
    expect(await loop.forge.getBranchHead(`conveyor/${number}`)).toBe(sha);
  });
});

/** An issue pushed with green CI, its critic answers queued: it reaches the critic on its own. */
async function reviewed(loop: Loop, answers: unknown[], files: Record<string, string> = PARSER) {
  const { number, sha } = await firstPush(loop, files);
  await critic(loop, number, answers);
  return { number, sha };
}

const PARSER = { "src/parser.ts": "export const parse = (s: string) => s.trim();\n" };

describe("critic verdicts", () => {
  it("REQUEST_CHANGES revises in the same session, with the in-scope findings as the instructions", async () => {
    const loop = await loopProject("changes");
    const { number } = await reviewed(loop, [
      report("REQUEST_CHANGES", "Handle empty input.", [
        finding("parse('') must return null"),
        finding("rename the module", { severity: "nit" }),
      ]),
    ]);
    const view = await until(loop, number, (v) => v.state === "revising");
    expect(view).toMatchObject({ criticRounds: 1, iteration: 2, sessionId: `sess-${number}` });
    // One post with the verdict, the summary and every finding: a review, not a review and a comment too.
    const reviews = await loop.forge.listReviews(view.prNumber ?? 0);
    expect(reviews).toHaveLength(1);
    expect(reviews[0]?.body).toContain("**Critic: REQUEST_CHANGES**");
    expect(reviews[0]?.body).toContain("parse('') must return null");
    const comments = await loop.forge.listComments(view.prNumber ?? 0);
    expect(comments.map((c) => c.body).join("\n")).not.toContain("Critic:");

    // The same request_review delivered again (a retry after its first attempt failed past the critic's
    // answer): the saved report is applied under its key, and the critic, a paid call, is not asked again.
    const asked = () => control<{ calls: number }>("critic-calls", { key: `${loop.repo}#${number}` });
    const before = (await asked()).calls;
    const reviewing = view.history.find((h) => h.event === "ci" && h.to === "awaiting_review");
    const again = REVIEW_DELIVERERS.request_review as Deliverer<"request_review">;
    const issue = { ...view, state: "awaiting_review", criticRounds: 0 };
    const key = `${loop.project}#${number}:${reviewing?.seq}:0`;
    const heard = await again({ kind: "request_review" }, { env, key, issue, recheck: () => null });
    expect(heard).toMatchObject({ type: "review", verdict: "REQUEST_CHANGES" });
    expect((await asked()).calls).toBe(before);
    expect(await loop.forge.listReviews(view.prNumber ?? 0)).toHaveLength(1);
  });

  it("BLOCK abandons at once, labels needs-human and keeps the worktree (no reap)", async () => {
    const loop = await loopProject("block");
    const { number } = await reviewed(loop, [report("BLOCK", "Deletes the users table.")]);
    const view = await until(loop, number, (v) => v.state === "abandoned" && v.outbox.length === 0);
    expect(view.reason).toBe("critic blocked the change: Deletes the users table.");
    expect((await loop.forge.getIssue(number)).labels).toContain("needs-human");
    expect((await loop.forge.getIssue(number)).state).toBe("open");
  });

  it("a malformed report is asked for again; a valid second answer counts", async () => {
    const loop = await loopProject("malformed");
    const { number } = await reviewed(loop, [
      { report: { verdict: "LGTM", summary: "" } },
      report("APPROVE", "Good."),
    ]);
    expect((await until(loop, number, (v) => v.state === "merged")).prNumber).toBeGreaterThan(0);
  });

  it("no valid report after asking again escalates: never read as APPROVE", async () => {
    const loop = await loopProject("nonsense");
    const { number } = await reviewed(loop, [
      { text: "Looks good to me!" },
      { report: { verdict: "APPROVE" } },
    ]);
    const view = await until(loop, number, (v) => v.state === "escalated");
    expect(view.reason).toMatch(/^the critic failed: the critic's report is invalid: summary: /);
    const pr = await loop.forge.getPullRequest(view.prNumber ?? 0);
    expect(pr.merged).toBe(false);
  });

  it("out-of-scope findings become tech-debt issues instead of a rejection", async () => {
    const loop = await loopProject("debt");
    const { number } = await reviewed(loop, [
      report("REQUEST_CHANGES", "Fine for this issue.", [
        finding("the logger leaks memory", { inScope: false }),
      ]),
    ]);
    await until(loop, number, (v) => v.state === "merged");
    const debt = await loop.forge.listIssuesByLabel("tech-debt");
    expect(debt).toHaveLength(1);
    expect(debt[0]?.title).toBe("Tech debt: the logger leaks memory");
    expect(debt[0]?.body).toContain(`outside that issue's scope`);
  });
});

describe("merging", () => {
  it("a change to a protected path waits for a human approval, then merges", async () => {
    const loop = await loopProject("protected");
    const { number } = await reviewed(loop, [report("APPROVE", "Good.")], {
      ...PARSER,
      ".woodpecker.yml": "steps: []\n",
    });
    // It waits in the vault: a protected_merge item for this head, pending a human.
    const held = await until(loop, number, (v) => v.state === "awaiting_approval" && v.vaultItem !== null);
    expect((await loop.forge.getPullRequest(held.prNumber ?? 0)).merged).toBe(false);
    expect((await loop.forge.getIssue(number)).labels).toContain("needs-human");
    const vault = projectStub(env, loop.project);
    expect(await vault.vaultItem(held.vaultItem ?? "")).toMatchObject({
      kind: "protected_merge",
      state: "pending",
      requester: { type: "issue", issue: number },
    });
    await send(loop, number, { type: "human_approval", by: "alice" });
    await until(loop, number, (v) => v.state === "merged");
    expect((await loop.forge.getPullRequest(held.prNumber ?? 0)).merged).toBe(true);
    expect(await vault.vaultItem(held.vaultItem ?? "")).toMatchObject({ state: "fired" });
  });

  it.each<[string, Record<string, string>, string[], string]>([
    ["a binary file (a NUL byte in .ci/run)", { ".ci/run": "echo ok\n\u0000" }, [], ".ci/run"],
    ["a path git quotes", { '.ci/täst "x".sh': "echo ok\n" }, [], '.ci/täst "x".sh'],
    ["a mode-only change", { ".ci/run": "echo ok\n" }, [".ci/run"], ".ci/run"],
  ])("%s of a protected path waits for a human approval", async (_name, files, executable, path) => {
    const loop = await loopProject("unseen");
    await push(loop, 0, { ".ci/run": "echo ok\n" }, { branch: "main" });
    const { number } = await firstPush(loop, { ...PARSER, ...files }, "Add the parser", executable);
    await critic(loop, number, [report("APPROVE", "Good.")]);
    const held = await until(loop, number, (v) => v.state === "awaiting_approval");
    expect(held.reason).toBe(`touches protected paths: ${path}`);
    expect((await loop.forge.getPullRequest(held.prNumber ?? 0)).merged).toBe(false);
  });

  it("merges once: a repeated approval is refused, a merge already done is confirmed", async () => {
    const loop = await loopProject("once");
    const { number } = await reviewed(loop, [report("APPROVE", "Good.")], {
      ...PARSER,
      ".woodpecker.yml": "x: 1\n",
    });
    const held = await until(loop, number, (v) => v.state === "awaiting_approval");
    await send(loop, number, { type: "human_approval", by: "alice" });
    // Someone merges by hand before Conveyor's merge goes out: the merge effect finds it merged and confirms.
    await loop.forge.mergePullRequest(held.prNumber ?? 0, { method: "merge" });
    const merged = await until(loop, number, (v) => v.state === "merged");
    const approvals = merged.history.filter((h) => h.event === "human_approval");
    expect(approvals.map((h) => h.outcome)).toEqual(["applied"]);
    const again = await issueAfter(loop, number, { type: "human_approval", by: "bob" });
    expect(again).toMatchObject({ outcome: "rejected" });
    expect(merged.history.filter((h) => h.event === "merge_confirmed")).toHaveLength(1);
  });
});

describe("caps", () => {
  it("CI still red after max_ci_fixes escalates with needs-human", async () => {
    const loop = await loopProject("cifix", { maxCiFixes: 1 });
    const { number } = await firstPush(loop, { ...PARSER, "ci.sh": RED_CI });
    await until(loop, number, (v) => v.state === "revising");
    const again = await push(loop, number, { "src/parser.ts": "// still broken\n" });
    await send(loop, number, { type: "dispatched", jobId: `job-${number}-2`, runnerId: "runner-1" });
    await send(loop, number, { type: "phase", phase: "awaiting_ci", headSha: again });
    const view = await until(loop, number, (v) => v.state === "escalated" && v.outbox.length === 0);
    expect(view.reason).toBe("CI still red after 1 fix attempts (max_ci_fixes 1)");
    expect((await loop.forge.getIssue(number)).labels).toContain("needs-human");
    const notes = (await loop.forge.listComments(number)).map((c) => c.body).join("\n");
    expect(notes).toContain(
      "**Conveyor needs a human.** The reason, as recorded:\n\n> CI still red after 1 fix attempts",
    );
    expect(notes).toContain("- branch: `conveyor/");
  });

  it("a critic that always requests changes ends abandoned at iteration 3 with needs-human, worktree kept", async () => {
    const loop = await loopProject("always");
    const changes = report("REQUEST_CHANGES", "Not yet.", [finding("still wrong")]);
    const { number } = await reviewed(loop, [changes]);
    for (let round = 1; round < 3; round++) {
      await until(loop, number, (v) => v.state === "revising" && v.criticRounds === round);
      const sha = await push(loop, number, { "src/parser.ts": `// round ${round}\n` });
      await send(loop, number, {
        type: "dispatched",
        jobId: `job-${number}-${round + 1}`,
        runnerId: "runner-1",
      });
      await send(loop, number, { type: "phase", phase: "awaiting_ci", headSha: sha });
    }
    const view = await until(loop, number, (v) => v.state === "abandoned" && v.outbox.length === 0);
    expect(view).toMatchObject({ iteration: 3, criticRounds: 3 });
    expect(view.reason).toBe("critic requested changes 3 times (max_critic_iterations 3)");
    expect((await loop.forge.getIssue(number)).labels).toContain("needs-human");
    const jobs = await jobsOf(loop.project);
    expect(jobs.filter((j) => j.kind === "reap")).toEqual([]);
  });
});

describe("pull requests Conveyor did not open", () => {
  it("a fork's pull request that says Fixes #N, opened then closed, leaves issue N as it was", async () => {
    const loop = await loopProject("fork");
    const { number } = await reviewed(loop, [report("APPROVE", "Good.")], {
      ...PARSER,
      ".woodpecker.yml": "steps: []\n",
    });
    const held = await until(loop, number, (v) => v.state === "awaiting_approval");
    for (const headRef of ["mallory-patch-1", `conveyor/${number}`]) {
      // From mallory's repository (a fork), whatever its branch is called.
      const pull = {
        number: (held.prNumber ?? 0) + 100,
        author: "mallory",
        head: { ref: headRef, repo: `mallory/${loop.project}` },
        body: `Fixes #${number}`,
      };
      for (const action of ["opened", "closed"])
        expect((await pullRequestDelivery(loop, action, pull)).status).toBe(202);
    }
    const after = await until(loop, number, (v) => v.outbox.length === 0);
    expect(after).toMatchObject({ state: "awaiting_approval", prNumber: held.prNumber });
  });
});

describe("the merge's own consequences", () => {
  it("the issue closed by the merge before the merge's answer arrives ends merged", async () => {
    const loop = await loopProject("race");
    const { number } = await reviewed(loop, [report("APPROVE", "Good.")], {
      ...PARSER,
      ".woodpecker.yml": "y: 1\n",
    });
    await until(loop, number, (v) => v.state === "awaiting_approval");
    await control("slow-merges", { repo: loop.repo, ms: 2_000 });
    await send(loop, number, { type: "human_approval", by: "alice" });
    // The forge merged and closed the issue ("Closes #N"); its answer to Conveyor's merge is still on the way.
    while ((await loop.forge.getIssue(number)).state !== "closed")
      await new Promise((r) => setTimeout(r, 50));
    const closed = await issueClosedDelivery(loop, number);
    expect(await closed.json()).toMatchObject({ accepted: true });
    const done = await until(loop, number, (v) => v.state === "merged" || v.state === "abandoned");
    expect(done).toMatchObject({ state: "merged", reason: null });
  });
});

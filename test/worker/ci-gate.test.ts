/**
 * The CI gate holds against what a session reports: its phase and its head sha are claims, and the forge
 * (the branch's head, that commit's CI) decides whether the issue moves on. Real local forge, real DOs.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueStub } from "../../src/issue-stub.ts";
import { claim, complete, drain, newRunner, taken } from "./support/jobs.ts";
import { type Loop, loopProject, push, send, services, until } from "./support/review.ts";

/** A forge issue taken through triage to a runner's claimed implement job. */
async function claimedIssue(loop: Loop) {
  const { number } = await loop.forge.createIssue({
    title: "Add the parser",
    body: "Parse.",
    labels: ["backlog"],
  });
  await send(loop, number, { type: "triage", blockers: [] });
  await issueStub(env, loop.project, number).drain();
  const runner = await newRunner(`gate-${loop.project}`);
  return { number, runner, job: taken(await claim(runner, [loop.project])) };
}

describe("the CI gate", () => {
  it("a session's awaiting_review waits for CI on the forge; the critic is asked only once CI is green", async () => {
    const loop = await loopProject("skip-ci");
    const { number, runner, job } = await claimedIssue(loop);
    const sha = await push(loop, number, { "src/parser.ts": "export const parse = () => null;\n" });

    const res = await complete(runner, job, { phase: "awaiting_review", headSha: sha, sessionId: "sess-1" });
    expect(res.status).toBe(204);
    await drain(loop.project);
    const issue = issueStub(env, loop.project, number);
    expect(await issue.view()).toMatchObject({ state: "awaiting_ci", headSha: sha });

    // The forge's CI runs once the pull request is open; its green status is what moves the issue.
    const view = await until(loop, number, (v) => v.state !== "awaiting_ci");
    expect(view.history.filter((h) => h.to === "awaiting_review").map((h) => h.event)).toEqual(["ci"]);
  });

  it("a runner's head sha that is not the forge's branch head never reaches review", async () => {
    const loop = await loopProject("claimed-head");
    const { number, runner, job } = await claimedIssue(loop);
    const claimed = await push(loop, number, { "src/parser.ts": "export const parse = () => null;\n" });
    const actual = await push(loop, number, { "src/evil.ts": "export {};\n" });
    // The claimed commit even has green CI: it is still not what the branch holds.
    const status = await fetch(`${services.forgeApiUrl}/repos/${loop.repo}/statuses/${claimed}`, {
      method: "POST",
      headers: { authorization: `token ${services.conveyorToken}`, "content-type": "application/json" },
      body: JSON.stringify({ context: "ci/woodpecker/pr/test", state: "success" }),
    });
    expect(status.status).toBe(201);

    // The runner also names another branch; the issue's branch is conveyor/<n> regardless.
    const res = await complete(runner, job, { phase: "awaiting_ci", headSha: claimed, branch: "main" });
    expect(res.status).toBe(204);
    await drain(loop.project);

    const view = await until(loop, number, (v) => v.state !== "awaiting_ci");
    expect(view).toMatchObject({
      state: "escalated",
      branch: `conveyor/${number}`,
      reason: `conveyor/${number} is at ${actual} on the forge, not at the reported head ${claimed}`,
    });
    expect(view.history.map((h) => h.to)).not.toContain("awaiting_review");
  });
});

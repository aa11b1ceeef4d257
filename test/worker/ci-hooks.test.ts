import { describe, expect, it } from "vitest";
import { MAX_CI_EXCERPT_CHARS } from "../../src/domain/ci-verdict.ts";
import { claimResponse } from "../../src/runner-api/contract.ts";
import {
  awaitingCi,
  checkHook,
  checkRun,
  githubProject,
  postStatus,
  STATUS_DELIVERY,
  statusPayload,
  woodpeckerLoop,
} from "./support/ci.ts";
import { call, claim, newRunner, taken } from "./support/jobs.ts";
import { control, loopProject, services } from "./support/review.ts";
import { deliver, fixtureBytes, freshProject, registerProject } from "./support/webhooks.ts";

const SUITE_SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";

describe("CI results pushed by GitHub: the forge's checks of the exact head decide", () => {
  it("one green suite of two moves nothing; the second one's red sends the issue to revise", async () => {
    const gh = await githubProject("gh-two-suites");
    const { project, repo, actions, circle } = gh;
    const sha = (
      await control<{ sha: string }>("push", { repo, branch: "conveyor/3", files: { "a.txt": "a" } })
    ).sha;
    const issue = await awaitingCi(project, 3, sha, repo);
    await checkRun(repo, actions, sha, { name: "build", conclusion: "success" });
    const test = await checkRun(repo, circle, sha, { name: "test", status: "in_progress" });

    const first = await checkHook(gh, "check_suite", "github/check_suite.completed.json", sha);
    expect(await first.json()).toEqual({ accepted: true, events: 0 });
    expect((await issue.view())?.state).toBe("awaiting_ci");

    const output = { title: "2 tests failed", summary: "parser.test.ts" };
    await checkRun(repo, circle, sha, { name: "test", conclusion: "failure", output }, test);
    const red = await checkHook(gh, "check_run", "github/check_run.completed.failure.json", sha);
    expect(await red.json()).toEqual({ accepted: true, events: 1 });
    expect(await issue.view()).toMatchObject({ state: "revising", ciFixes: 1 });
    await issue.drain();
    const revise = taken(await claim(await newRunner("gh-suites"), [project]));
    expect(revise.job.instructions).toBe(
      "test: failure — 2 tests failed: parser.test.ts\ncircleci-app: failure — check suite",
    );
  });

  it("a red result with 200 kB of check output: a bounded excerpt, a 2xx, and a revise job the runner parses", async () => {
    const gh = await githubProject("gh-long-output");
    const { project, repo, circle } = gh;
    const sha = (
      await control<{ sha: string }>("push", { repo, branch: "conveyor/5", files: { "c.txt": "c" } })
    ).sha;
    const issue = await awaitingCi(project, 5, sha, repo);
    for (let i = 0; i < 10; i++) {
      const output = { title: `suite ${i} failed`, summary: "z".repeat(20_000) };
      await checkRun(repo, circle, sha, { name: `test-${i}`, conclusion: "failure", output });
    }
    const red = await checkHook(gh, "check_run", "github/check_run.completed.failure.json", sha);
    expect(red.ok).toBe(true);
    expect(await red.json()).toEqual({ accepted: true, events: 1 });
    expect(await issue.view()).toMatchObject({ state: "revising" });
    await issue.drain();
    const res = await call(await newRunner("gh-long"), "claim", { waitMs: 0, projects: [project] });
    const revise = claimResponse.parse(await res.json());
    expect(revise.job.kind).toBe("revise");
    expect(revise.job.instructions?.length).toBeLessThanOrEqual(MAX_CI_EXCERPT_CHARS);
    expect(revise.job.instructions).toMatch(/^test-\d: failure — suite \d failed: z+/);
  });

  it("review waits until every suite is green", async () => {
    const gh = await githubProject("gh-all-green");
    const { project, repo, actions, circle } = gh;
    const sha = (
      await control<{ sha: string }>("push", { repo, branch: "conveyor/4", files: { "b.txt": "b" } })
    ).sha;
    const issue = await awaitingCi(project, 4, sha, repo);
    await checkRun(repo, actions, sha, { name: "build", conclusion: "success" });
    const lint = await checkRun(repo, circle, sha, { name: "lint", status: "queued" });
    const early = await checkHook(gh, "check_suite", "github/check_suite.completed.json", sha);
    expect(await early.json()).toEqual({ accepted: true, events: 0 });

    await checkRun(repo, circle, sha, { name: "lint", conclusion: "success" }, lint);
    const res = await checkHook(gh, "check_run", "github/check_run.completed.success.json", sha);
    expect(await res.json()).toEqual({ accepted: true, events: 1 });
    expect((await issue.view())?.history.at(-1)).toMatchObject({
      event: "ci",
      to: "awaiting_review",
      cause: { kind: "delivery" },
    });
  });

  it("CI for a commit no issue waits on is ignored", async () => {
    const project = freshProject("gh-ci");
    await registerProject(project, "github", "Codertocat/Hello-World", { ci: { kind: "github-actions" } });
    const res = await deliver(
      project,
      { forge: "github", event: "check_suite" },
      fixtureBytes("github/check_suite.completed.json"),
    );
    expect(await res.json()).toEqual({ ignored: `no issue waits for CI on ${SUITE_SHA}` });
  });
});

describe("commit statuses pushed by Gitea", () => {
  it("a red status from Woodpecker brings the failing step's log to the revise session", async () => {
    const loop = await woodpeckerLoop("woodpecker-ci");
    const sha = (
      await control<{ sha: string }>("push", {
        repo: loop.repo,
        branch: "conveyor/2",
        files: { "b.txt": "b" },
      })
    ).sha;
    const issue = await awaitingCi(loop.project, 2, sha, loop.repo);
    const target = `${services.woodpeckerUrl}/repos/7/pipeline/42/1`;
    await postStatus(loop, sha, {
      context: "ci/woodpecker/pr/test",
      state: "failure",
      description: "failed",
      target_url: target,
    });
    const res = await deliver(
      loop.project,
      STATUS_DELIVERY,
      statusPayload(loop, sha, "ci/woodpecker/pr/test", "failure"),
    );
    expect(await res.json()).toEqual({ accepted: true, events: 1 });
    await issue.drain();
    const revise = taken(await claim(await newRunner("woodpecker"), [loop.project]));
    expect(revise.job.kind).toBe("revise");
    expect(revise.job.instructions).toBe(
      [
        `ci/woodpecker/pr/test: failure — failed (${target})`,
        "",
        "--- test / unit (failure) ---",
        "+ npm test",
        "not ok 1 - parse('') returns null",
        "",
        "1",
      ].join("\n"),
    );
    // A human reads the check, why it failed and where its log is, on the issue's timeline.
    const ci = (await issue.view())?.history.find((h) => h.event === "ci");
    expect(ci?.ci).toEqual({
      result: "red",
      checks: [{ name: "ci/woodpecker/pr/test", outcome: "failure", description: "failed", url: target }],
    });
  });

  it("reads the combined status: one context's success is not all of CI", async () => {
    const loop = await loopProject(
      "gitea-ci",
      { forge: "gitea", ci: { kind: "woodpecker", contextPattern: "external/*" } },
      { forgeCi: false },
    );
    const sha = (
      await control<{ sha: string }>("push", {
        repo: loop.repo,
        branch: "conveyor/1",
        files: { "a.txt": "a" },
      })
    ).sha;
    const issue = await awaitingCi(loop.project, 1, sha, loop.repo);

    await postStatus(loop, sha, { context: "external/lint", state: "success" });
    await postStatus(loop, sha, { context: "external/test", state: "pending" });
    const partial = await deliver(
      loop.project,
      STATUS_DELIVERY,
      statusPayload(loop, sha, "external/lint", "success"),
    );
    expect(await partial.json()).toEqual({ accepted: true, events: 0 });
    expect((await issue.view())?.state).toBe("awaiting_ci");

    await postStatus(loop, sha, { context: "external/test", state: "failure" });
    const failed = await deliver(
      loop.project,
      STATUS_DELIVERY,
      statusPayload(loop, sha, "external/test", "failure"),
    );
    expect(await failed.json()).toEqual({ accepted: true, events: 1 });
    const view = await issue.view();
    expect(view).toMatchObject({ state: "revising", ciFixes: 1 });
  });
});

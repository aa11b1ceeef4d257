/**
 * The repository's merge rules, read from the local forge and honoured: its allowed merge methods, its
 * branch protection's required approvals (which Conveyor's own account cannot give) and required checks.
 * Real local forge (its CI, its merge refusals), the Messages-API stand-in as the critic, a writer's review
 * through the Worker's webhook route.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createForgeClient } from "../../src/forge/client/index.ts";
import { projectStub } from "../../src/project-stub.ts";
import {
  control,
  critic,
  firstPush,
  firstSession,
  forgeApi,
  type Loop,
  loopProject,
  push,
  report,
  services,
  until,
} from "./support/review.ts";
import { reviewDelivery } from "./support/webhooks.ts";

const protect = (loop: Loop, rule: object) =>
  forgeApi(loop, "POST", "/branch_protections", { rule_name: "main", ...rule });

const PARSER = { "src/parser.ts": "export const parse = (s: string) => s.trim();\n" };

describe("merge methods", () => {
  it("a squash-only repository merges by squash, with Conveyor's message from the issue", async () => {
    const loop = await loopProject("squash-only");
    await forgeApi(loop, "PATCH", "", { allow_merge_commits: false, allow_rebase: false });
    // The title's keyword would close issue 1 if the forge wrote the message: Conveyor's only refers to it.
    const { number } = await firstPush(loop, PARSER, "Add the parser, fixes #1 too");
    await critic(loop, number, [report("APPROVE", "Good.")]);
    const merged = await until(loop, number, (v) => v.state === "merged");
    const head = await loop.forge.getBranchHead("main");
    const commit = await control<{ message: string; parents: string[] }>("commit", {
      repo: loop.repo,
      ref: head,
    });
    // One commit on main, not a merge commit: one parent.
    expect(commit.parents).toHaveLength(1);
    expect(commit.message).toBe(`Add the parser, refs #1 too (#${merged.prNumber})\n\nCloses #${number}`);
  });
});

describe("branch protection", () => {
  it("one required approval holds the merge for a person, in the vault, and a writer's approval merges it", async () => {
    const loop = await loopProject("one-approval");
    await protect(loop, { required_approvals: 1 });
    const { number } = await firstPush(loop, PARSER);
    await critic(loop, number, [report("APPROVE", "Good.")]);
    const held = await until(loop, number, (v) => v.state === "awaiting_approval" && v.vaultItem !== null);
    expect(held.reason).toBe(
      "branch protection on main requires 1 approving review (0 given), and Conveyor cannot approve its own pull request: a person with write access approves it on the forge",
    );
    expect(held.history.map((h) => h.to)).not.toContain("escalated");
    const item = await projectStub(env, loop.project).vaultItem(held.vaultItem ?? "");
    expect(item).toMatchObject({ kind: "protected_merge", state: "pending" });
    // The person is told why, on the issue, with the item to approve.
    await until(loop, number, (v) => v.outbox.length === 0);
    const asked = (await loop.forge.listComments(number)).map((c) => c.body);
    expect(asked).toContainEqual(expect.stringContaining(`${held.reason} (vault item ${held.vaultItem})`));
    expect((await loop.forge.getPullRequest(held.prNumber ?? 0)).merged).toBe(false);

    // A writer approves on the forge (which then counts it) and the forge tells Conveyor.
    const alice = await control<{ token: string }>("user", {
      repo: loop.repo,
      login: "alice",
      level: "write",
    });
    const res = await fetch(`${services.forgeApiUrl}/repos/${loop.repo}/pulls/${held.prNumber}/reviews`, {
      method: "POST",
      headers: { authorization: `token ${alice.token}`, "content-type": "application/json" },
      body: JSON.stringify({ event: "APPROVED", body: "Looks right.", commit_id: held.headSha }),
    });
    expect(res.status).toBe(200);
    const pr = held.prNumber ?? 0;
    await reviewDelivery(loop, pr, {
      kind: "approved",
      by: "alice",
      body: "LGTM",
      headSha: held.headSha ?? "",
    });
    await until(loop, number, (v) => v.state === "merged");
    expect((await loop.forge.getPullRequest(pr)).merged).toBe(true);
  });

  it("on GitHub, where a writer's token cannot read the rule, the forge's refusal for approvals holds the merge too", async () => {
    const loop = await loopProject("refused", { ci: { kind: "none" } }, { kind: "github", forgeCi: false });
    await protect(loop, { required_approvals: 1 });
    // Conveyor's account may write, not administer: GitHub shows it that main is protected, not what for.
    await control("user", { repo: loop.repo, login: "conveyor", level: "write" });
    // Filed through Gitea's API, which the local forge's GitHub dialect shares (label names, not ids).
    const human = createForgeClient({
      forge: "forgejo",
      apiUrl: services.forgeApiUrl,
      repo: loop.repo,
      token: services.conveyorToken,
    });
    const { number } = await human.createIssue({
      title: "Add the parser",
      body: "Parse.",
      labels: ["backlog"],
    });
    await firstSession(loop, number, await push(loop, number, PARSER));
    await critic(loop, number, [report("APPROVE", "Good.")]);
    const held = await until(loop, number, (v) => v.state === "awaiting_approval" && v.vaultItem !== null);
    expect(held.reason).toBe(
      "the forge refused the merge for want of approvals (At least 1 approving review is required by reviewers with write access.): a person with write access approves the pull request on the forge",
    );
    expect(held.history.map((h) => `${h.event}→${h.to}`)).toContain("merge_needs_approval→awaiting_approval");
    expect(held.history.map((h) => h.to)).not.toContain("escalated");
  });

  it("a required check named in protection gates the verdict beside the project's own CI", async () => {
    const loop = await loopProject("required-check");
    await protect(loop, { enable_status_check: true, status_check_contexts: ["security/*"] });
    const { number } = await loop.forge.createIssue({
      title: "Add the parser",
      body: "Parse.",
      labels: ["backlog"],
    });
    const sha = await push(loop, number, PARSER);
    // Outside the project's own CI (ci/woodpecker/*), which is green: only protection makes it count.
    await forgeApi(loop, "POST", `/statuses/${sha}`, { context: "security/scan", state: "failure" });
    await firstSession(loop, number, sha);
    const red = await until(loop, number, (v) => v.state !== "awaiting_ci");
    expect(red.state).toBe("revising");
    const verdict = red.history.find((h) => h.event === "ci")?.ci;
    expect(verdict?.checks.map((check) => check.name)).toEqual(["security/scan"]);
  });
});

/**
 * The repository's merge rules on the local forge, through both production clients: the merge methods it
 * allows, its branch protection as an admin and as a writer read it, and the merge's refusals in each forge's
 * words (Gitea's 405 "not allowed to merge [reason: …]", GitHub's "At least 1 approving review is required …").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createForgeClient, type ForgeClient, type Plain } from "../../../src/forge/client/index.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { api, Checkout, startForge } from "./harness.ts";

const REPO = "acme/rules";

let forge: LocalForge;
let cleanup: () => Promise<void>;
let checkout: Checkout;
const tokens: Record<string, string> = {};

const client = (kind: "forgejo" | "github", login: string): ForgeClient<Plain> =>
  createForgeClient({
    forge: kind,
    apiUrl: forge.apiUrl,
    repo: REPO,
    token: tokens[login] ?? "",
    maxAttempts: 1,
  });

beforeAll(async () => {
  const started = await startForge({ ci: { enabled: false } });
  ({ forge, cleanup } = started);
  await forge.createRepo({ owner: "acme", name: "rules", seed: { files: { "README.md": "# rules\n" } } });
  for (const [login, level] of [
    ["conveyor", "admin"],
    ["alice", "write"],
    ["visitor", "read"],
  ] as const) {
    tokens[login] = forge.createUser(login).token;
    forge.addCollaborator(REPO, login, level);
  }
  checkout = await Checkout.clone(forge.cloneUrl(REPO, forge.admin.token), `${started.workDir}/rules`);
});

afterAll(async () => {
  await cleanup();
});

/** A pull request by Conveyor's account from a new branch, with a green status on its head. */
async function pull(name: string): Promise<{ number: number; sha: string }> {
  await checkout.reset("main");
  const sha = await checkout.commitAndPush(name, { [`${name}.txt`]: `${name}\n` });
  const created = await client("forgejo", "conveyor").createPullRequest({
    head: name,
    base: "main",
    title: `Change ${name}`,
    body: "",
  });
  await api(forge, tokens.conveyor ?? "", "POST", `/repos/${REPO}/statuses/${sha}`, {
    state: "success",
    context: "ci/test",
  });
  return { number: created.number, sha };
}

describe("merge methods", () => {
  it("both clients read what the repository allows, and a refused method is answered in each forge's words", async () => {
    const edit = await api(forge, tokens.conveyor ?? "", "PATCH", `/repos/${REPO}`, {
      allow_merge_commits: false,
      allow_rebase: false,
    });
    expect(edit.status).toBe(200);
    for (const kind of ["forgejo", "github"] as const) {
      expect(await client(kind, "conveyor").getMergeMethods()).toEqual({
        merge: false,
        squash: true,
        rebase: false,
      });
    }
    const { number, sha } = await pull("squash-only");
    expect(await client("forgejo", "conveyor").mergePullRequest(number, { method: "merge", sha })).toEqual({
      kind: "not_mergeable",
      merged: false,
      status: 405,
      reason: "merge is not allowed an allowed merge style for this repository",
    });
    expect(
      await client("github", "conveyor").mergePullRequest(number, { method: "rebase", sha }),
    ).toMatchObject({
      status: 405,
      reason: "Rebase merges are not allowed on this repository.",
    });
    const merged = await client("github", "conveyor").mergePullRequest(number, {
      method: "squash",
      sha,
      title: "Squash only (#2)",
      message: "Closes #1",
    });
    expect(merged).toEqual({ kind: "merged", merged: true });
    // One commit on main (one parent), with Conveyor's message.
    await checkout.reset("main");
    expect(await checkout.run("log", "-1", "--format=%B%n%P")).toMatch(
      /^Squash only \(#2\)\n\nCloses #1\n+\w{40}$/,
    );
    await api(forge, tokens.conveyor ?? "", "PATCH", `/repos/${REPO}`, {
      allow_merge_commits: true,
      allow_rebase: true,
    });
  });
});

describe("branch protection", () => {
  beforeAll(async () => {
    const created = await api(forge, tokens.conveyor ?? "", "POST", `/repos/${REPO}/branch_protections`, {
      rule_name: "main",
      required_approvals: 1,
      enable_status_check: true,
      status_check_contexts: ["ci/test", "lint/*"],
      block_on_outdated_branch: true,
      dismiss_stale_approvals: true,
    });
    expect(created.status).toBe(201);
  });

  it("an admin reads the whole rule; a writer what the branch shows of it", async () => {
    const rule = {
      requiredApprovals: 1,
      requiredChecks: ["ci/test", "lint/*"],
      upToDate: true,
      codeOwnerReview: false,
      dismissStale: true,
    };
    expect(await client("forgejo", "conveyor").getBranchProtection("main")).toEqual(rule);
    expect(await client("github", "conveyor").getBranchProtection("main")).toEqual(rule);
    // Neither forge shows a writer whether the head must be up to date: not known (null), not false.
    expect(await client("forgejo", "alice").getBranchProtection("main")).toEqual({
      ...rule,
      upToDate: null,
      dismissStale: false,
    });
    // GitHub shows a writer the required checks only: how many approvals it asks is not known.
    expect(await client("github", "alice").getBranchProtection("main")).toEqual({
      requiredApprovals: null,
      requiredChecks: ["ci/test", "lint/*"],
      upToDate: null,
      codeOwnerReview: false,
      dismissStale: false,
    });
    expect(await client("github", "conveyor").getBranchProtection("squash-only")).toBeNull();
    // The CI gate reads only what the branch shows, even as an admin: one read, never the rule.
    expect(await client("forgejo", "conveyor").getBranchProtection("main", { branchOnly: true })).toEqual(
      await client("forgejo", "alice").getBranchProtection("main"),
    );
    expect(await client("github", "conveyor").getBranchProtection("main", { branchOnly: true })).toEqual(
      await client("github", "alice").getBranchProtection("main"),
    );
  });

  it("refuses the merge until the checks pass and someone else with write access approves the head", async () => {
    const { number, sha } = await pull("protected");
    const gitea = client("forgejo", "conveyor");
    const refusal = async (kind: "forgejo" | "github") =>
      (
        (await client(kind, "conveyor").mergePullRequest(number, { method: "merge", sha })) as {
          reason: string;
        }
      ).reason;
    expect(await refusal("forgejo")).toBe(
      "not allowed to merge [reason: Not all required status checks successful]",
    );
    expect(await refusal("github")).toBe('Required status check "lint/*" is expected.');
    await api(forge, tokens.conveyor ?? "", "POST", `/repos/${REPO}/statuses/${sha}`, {
      state: "success",
      context: "lint/style",
    });
    expect(await refusal("forgejo")).toBe("not allowed to merge [reason: Does not have enough approvals]");
    expect(await refusal("github")).toBe(
      "At least 1 approving review is required by reviewers with write access.",
    );
    // The author cannot approve; a reader's approval is not official.
    await expect(gitea.createReview(number, { event: "APPROVE", body: "mine" })).rejects.toMatchObject({
      status: 422,
    });
    await client("forgejo", "visitor").createReview(number, { event: "APPROVE", body: "fine by me" });
    expect(await refusal("forgejo")).toBe("not allowed to merge [reason: Does not have enough approvals]");
    await client("forgejo", "alice").createReview(number, { event: "APPROVE", body: "Good." });
    const reviews = await gitea.listReviews(number);
    expect(reviews.map((r) => [r.author, r.state, r.commitId])).toEqual([
      ["visitor", "approved", sha],
      ["alice", "approved", sha],
    ]);
    expect(await gitea.mergePullRequest(number, { method: "merge", sha })).toEqual({
      kind: "merged",
      merged: true,
    });
  });
});

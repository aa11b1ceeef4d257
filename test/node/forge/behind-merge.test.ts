/**
 * A pull request behind its base at the merge, on the local forge through the production clients: merged as
 * it is where the base's protection does not block an outdated branch, refused in each forge's words where it
 * does; and the merge effect's way back from that refusal (durable-objects/issue/effects/up-to-date.ts): the
 * forge updates the branch, and the updated head merges. On GitHub, where `mergeable_state` says `behind`
 * only under strict protection, the stay-current gate (durable-objects/issue/effects/stay-current.ts) still
 * tells a head behind its base.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepCurrent } from "../../../durable-objects/issue/effects/stay-current.ts";
import { updateRefusedAsBehind } from "../../../durable-objects/issue/effects/up-to-date.ts";
import type { ForgeClient, Plain } from "../../../src/forge/client/index.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { api, Checkout, clientFor, startForge } from "./harness.ts";

const REPO = "acme/behind";
/** Its own repository: the protection the tests of REPO set does not reach it. */
const GITHUB_REPO = "acme/behind-github";

let forge: LocalForge;
let cleanup: () => Promise<void>;
let checkout: Checkout;
let githubCheckout: Checkout;
let token = "";

const client = (kind: "forgejo" | "github", repo = REPO): ForgeClient<Plain> =>
  clientFor(forge, token, repo, kind);

beforeAll(async () => {
  const started = await startForge({ ci: { enabled: false } });
  ({ forge, cleanup } = started);
  token = forge.createUser("conveyor").token;
  for (const repo of [REPO, GITHUB_REPO]) {
    const [owner = "", name = ""] = repo.split("/");
    await forge.createRepo({ owner, name, seed: { files: { "README.md": `# ${name}\n` } } });
    forge.addCollaborator(repo, "conveyor", "admin");
  }
  const clone = (repo: string) =>
    Checkout.clone(forge.cloneUrl(repo, forge.admin.token), `${started.workDir}/${repo.split("/")[1]}`);
  checkout = await clone(REPO);
  githubCheckout = await clone(GITHUB_REPO);
});

afterAll(async () => {
  await cleanup();
});

/** A pull request from a new branch `name`, then a commit on the base: the pull request is behind it. */
async function behind(name: string, repo = REPO): Promise<{ number: number; sha: string }> {
  const clone = repo === REPO ? checkout : githubCheckout;
  await clone.reset("main");
  const sha = await clone.commitAndPush(name, { [`${name}.txt`]: `${name}\n` });
  const { number } = await client("forgejo", repo).createPullRequest({
    head: name,
    base: "main",
    title: name,
    body: "",
  });
  await clone.reset("main");
  await clone.commitAndPush("main", { [`${name}-base.txt`]: "moved\n" });
  expect(await client("forgejo", repo).getMergeability(number)).toEqual({ kind: "behind" });
  return { number, sha };
}

/** What GitHub itself says of the pull request: `mergeable_state`. */
async function githubState(number: number): Promise<string> {
  const headers = { authorization: `token ${token}`, "X-GitHub-Api-Version": "2022-11-28" };
  const res = await fetch(`${forge.apiUrl}/repos/${GITHUB_REPO}/pulls/${number}`, { headers });
  return ((await res.json()) as { mergeable_state: string }).mergeable_state;
}

describe("on GitHub, a pull request behind a base without strict protection", () => {
  const github = () => client("github", GITHUB_REPO);

  it("reads `clean` from GitHub, and `always` brings it up to date all the same", async () => {
    const { number, sha } = await behind("gh-always", GITHUB_REPO);
    expect(await githubState(number)).toBe("clean");

    // Before the GitHub client compared the base with the head, this went ahead with the stale head.
    const updated = await keepCurrent(github(), number, sha);
    expect(updated).toMatchObject({ type: "branch_updated" });
    const headSha = updated?.type === "branch_updated" ? updated.headSha : sha;
    expect(await github().getCommitParents(headSha)).toEqual([sha, await github().getBranchHead("main")]);
    expect(await github().getMergeability(number)).toEqual({ kind: "current" });
    expect(await keepCurrent(github(), number, headSha)).toBeNull();
  });

  it("reads `behind` through the GitHub client; `when_required` merges it as it is; strict protection with a required check makes GitHub say `behind`", async () => {
    const { number, sha } = await behind("gh-as-it-is", GITHUB_REPO);
    expect(await githubState(number)).toBe("clean");
    expect(await github().getMergeability(number)).toEqual({ kind: "behind" });
    // As upToDateRule reads it: GitHub's branch, unprotected.
    const rule = async () => ({
      setting: "when_required" as const,
      protection: await github().getBranchProtection("main"),
    });
    expect(await rule()).toEqual({ setting: "when_required", protection: null });
    expect(await keepCurrent(github(), number, sha, { rule })).toBeNull();
    expect(await github().mergePullRequest(number, { method: "merge", sha })).toEqual({
      kind: "merged",
      merged: true,
    });

    const strict = await fetch(`${forge.apiUrl}/repos/${GITHUB_REPO}/branches/main/protection`, {
      method: "PUT",
      headers: { authorization: `token ${token}`, "X-GitHub-Api-Version": "2022-11-28" },
      body: JSON.stringify({
        required_status_checks: { strict: true, contexts: ["ci/test"] },
        enforce_admins: null,
        required_pull_request_reviews: null,
        restrictions: null,
      }),
    });
    expect(strict.status).toBe(200);
    const required = await behind("gh-strict", GITHUB_REPO);
    expect(await githubState(required.number)).toBe("behind");
    expect(await github().getMergeability(required.number)).toEqual({ kind: "behind" });
  });
});

describe("a pull request behind its base, at the merge", () => {
  it("merges as it is where the base's protection does not block an outdated branch", async () => {
    for (const kind of ["forgejo", "github"] as const) {
      const { number, sha } = await behind(`free-${kind}`);
      expect(await client(kind).mergePullRequest(number, { method: "merge", sha })).toEqual({
        kind: "merged",
        merged: true,
      });
    }
    // A rule that does not ask for it changes nothing.
    await api(forge, token, "POST", `/repos/${REPO}/branch_protections`, { rule_name: "main" });
    const { number, sha } = await behind("free-rule");
    expect((await client("forgejo").getBranchProtection("main"))?.upToDate).toBe(false);
    expect(await client("forgejo").mergePullRequest(number, { method: "merge", sha })).toMatchObject({
      merged: true,
    });
  });

  it("is refused where it does, and the refusal brings it up to date instead of failing the merge", async () => {
    const edit = await api(forge, token, "PATCH", `/repos/${REPO}/branch_protections/main`, {
      block_on_outdated_branch: true,
    });
    expect(edit.status).toBe(200);
    expect((await client("forgejo").getBranchProtection("main"))?.upToDate).toBe(true);
    const { number, sha } = await behind("required");
    const refusal = async (kind: "forgejo" | "github") =>
      (await client(kind).mergePullRequest(number, { method: "merge", sha })) as { reason?: string };
    expect((await refusal("github")).reason).toBe("Head branch is not up to date with the base branch.");
    const { reason = "" } = await refusal("forgejo");
    expect(reason).toBe("not allowed to merge [reason: The head branch is behind the base branch]");

    // The merge turn is this test's alone.
    const underTurn = async () => true;
    const updated = await updateRefusedAsBehind(client("forgejo"), number, sha, reason, underTurn);
    expect(updated).toMatchObject({ type: "branch_updated" });
    const headSha = updated?.type === "branch_updated" ? updated.headSha : sha;
    expect(headSha).not.toBe(sha);
    expect(await client("forgejo").mergePullRequest(number, { method: "merge", sha: headSha })).toEqual({
      kind: "merged",
      merged: true,
    });
    // A refusal of another kind is not taken for one.
    expect(
      await updateRefusedAsBehind(client("forgejo"), number, sha, "head out of date", underTurn),
    ).toBeNull();
  });
});

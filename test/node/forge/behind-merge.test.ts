/**
 * A pull request behind its base at the merge, on the local forge through the production clients: merged as
 * it is where the base's protection does not block an outdated branch, refused in each forge's words where it
 * does; and the merge effect's way back from that refusal (durable-objects/issue/effects/up-to-date.ts): the
 * forge updates the branch, and the updated head merges.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { updateRefusedAsBehind } from "../../../durable-objects/issue/effects/up-to-date.ts";
import type { ForgeClient, Plain } from "../../../src/forge/client/index.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { api, Checkout, clientFor, startForge } from "./harness.ts";

const REPO = "acme/behind";

let forge: LocalForge;
let cleanup: () => Promise<void>;
let checkout: Checkout;
let token = "";

const client = (kind: "forgejo" | "github"): ForgeClient<Plain> => clientFor(forge, token, REPO, kind);

beforeAll(async () => {
  const started = await startForge({ ci: { enabled: false } });
  ({ forge, cleanup } = started);
  await forge.createRepo({ owner: "acme", name: "behind", seed: { files: { "README.md": "# behind\n" } } });
  token = forge.createUser("conveyor").token;
  forge.addCollaborator(REPO, "conveyor", "admin");
  checkout = await Checkout.clone(forge.cloneUrl(REPO, forge.admin.token), `${started.workDir}/behind`);
});

afterAll(async () => {
  await cleanup();
});

/** A pull request from a new branch `name`, then a commit on the base: the pull request is behind it. */
async function behind(name: string): Promise<{ number: number; sha: string }> {
  await checkout.reset("main");
  const sha = await checkout.commitAndPush(name, { [`${name}.txt`]: `${name}\n` });
  const { number } = await client("forgejo").createPullRequest({
    head: name,
    base: "main",
    title: name,
    body: "",
  });
  await checkout.reset("main");
  await checkout.commitAndPush("main", { [`${name}-base.txt`]: "moved\n" });
  expect(await client("forgejo").getMergeability(number)).toEqual({ kind: "behind" });
  return { number, sha };
}

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
    const underTurn = async () => {};
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

import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForgeClient, ForgeHttpError, type Plain } from "../../../src/forge/client/index.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { api, apiGet, Checkout, clientFor, startForge } from "./harness.ts";

// Every method of the production Forgejo client, against the local forge over real HTTP and git.

const REPO = "acme/widgets";
const APP = "one\ntwo\nthree\n";

let forge: LocalForge;
let cleanup: () => Promise<void>;
let conveyor: ForgeClient<Plain>;
let alice: ForgeClient<Plain>;
let conveyorToken: string;
let aliceToken: string;
let checkout: Checkout;

beforeAll(async () => {
  const started = await startForge({ ci: { enabled: false } });
  ({ forge, cleanup } = started);
  await forge.createRepo({
    owner: "acme",
    name: "widgets",
    private: true,
    seed: { files: { "README.md": "# widgets\n", "src/app.txt": APP } },
  });
  // Conveyor's bot administers the repository (webhooks, permission checks need it); alice and bob are humans.
  const collaborator = (login: string, level: "admin" | "write" | "read") => {
    const { token } = forge.createUser(login);
    forge.addCollaborator(REPO, login, level);
    return token;
  };
  conveyorToken = collaborator("conveyor", "admin");
  aliceToken = collaborator("alice", "write");
  collaborator("bob", "read");
  forge.createUser("stranger");
  conveyor = clientFor(forge, conveyorToken, REPO);
  alice = clientFor(forge, aliceToken, REPO);
  checkout = await Checkout.clone(forge.cloneUrl(REPO, aliceToken), `${started.workDir}/widgets`);
});

afterAll(async () => {
  await cleanup();
});

/** A branch with one commit off main, pushed by alice, and a pull request for it opened by Conveyor. */
async function openPull(branch: string, files: Record<string, string>, body = "") {
  await checkout.reset("main");
  await checkout.commitAndPush(branch, files);
  return conveyor.createPullRequest({ head: branch, base: "main", title: `Work on ${branch}`, body });
}

function repoLabels() {
  return apiGet<{ name: string; color: string; description: string }[]>(
    forge,
    forge.admin.token,
    `/repos/${REPO}/labels?limit=50`,
  );
}

describe("the production Forgejo client against the local forge", () => {
  it("createIssue creates missing labels; getIssue reads the issue back", async () => {
    const { number } = await conveyor.createIssue({
      title: "Widget breaks",
      body: "Steps…",
      labels: ["bug", "backlog"],
    });

    expect(await conveyor.getIssue(number)).toEqual({
      number,
      title: "Widget breaks",
      body: "Steps…",
      state: "open",
      labels: ["backlog", "bug"],
      author: "conveyor",
      isPullRequest: false,
    });
  });

  it("ensureLabels creates each label once, with its color and description", async () => {
    const wanted = [
      { name: "needs-human", color: "#D73A4A", description: "A human must decide" },
      "in-progress",
    ];
    await conveyor.ensureLabels(wanted);
    await conveyor.ensureLabels(wanted);

    const labels = await repoLabels();
    expect(labels.filter((label) => label.name === "needs-human")).toEqual([
      expect.objectContaining({ color: "d73a4a", description: "A human must decide" }),
    ]);
    expect(labels.filter((label) => label.name === "in-progress")).toHaveLength(1);
  });

  it("addLabels and removeLabel; removing a label that is absent succeeds", async () => {
    const { number } = await conveyor.createIssue({ title: "Labelled", body: "", labels: ["backlog"] });

    await conveyor.addLabels(number, ["in-progress", "backlog"]);
    expect((await conveyor.getIssue(number)).labels).toEqual(["backlog", "in-progress"]);
    await conveyor.removeLabel(number, "backlog");
    await conveyor.removeLabel(number, "backlog");
    await conveyor.removeLabel(number, "no-such-label");
    expect((await conveyor.getIssue(number)).labels).toEqual(["in-progress"]);
  });

  it("listIssuesByLabel follows the pages and leaves out pull requests and other states", async () => {
    const numbers: number[] = [];
    for (let i = 0; i < 53; i++) {
      numbers.push((await conveyor.createIssue({ title: `Bulk ${i}`, body: "", labels: ["bulk"] })).number);
    }
    await conveyor.closeIssue(numbers[0] ?? 0);
    const pull = await openPull("bulk-pull", { "bulk.txt": "bulk\n" });
    await conveyor.addLabels(pull.number, ["bulk"]);

    const open = await conveyor.listIssuesByLabel("bulk");
    const all = await conveyor.listIssuesByLabel("bulk", "all");
    const closed = await conveyor.listIssuesByLabel("bulk", "closed");

    expect(open.map((issue) => issue.number).sort((a, b) => a - b)).toEqual(numbers.slice(1));
    expect(all).toHaveLength(53);
    expect(closed.map((issue) => issue.number)).toEqual([numbers[0]]);
    expect(all.every((issue) => !issue.isPullRequest && issue.labels.includes("bulk"))).toBe(true);
  });

  it("comment and listComments", async () => {
    const { number } = await conveyor.createIssue({ title: "Talk", body: "", labels: [] });

    const first = await conveyor.comment(number, "Picked up by Conveyor.");
    const second = await alice.comment(number, "/conveyor retry");

    const comments = await conveyor.listComments(number);
    expect(comments).toEqual([
      { id: first.id, body: "Picked up by Conveyor.", author: "conveyor", createdAt: expect.any(String) },
      { id: second.id, body: "/conveyor retry", author: "alice", createdAt: expect.any(String) },
    ]);
  });

  it("createPullRequest, getPullRequest, getPullRequestDiff and updatePullRequest", async () => {
    const created = await openPull("conveyor/7-widget", { "src/app.txt": `${APP}four\n` });

    expect(created).toEqual({
      number: created.number,
      url: `${forge.url}/${REPO}/pulls/${created.number}`,
      headSha: await checkout.run("rev-parse", "HEAD"),
    });
    expect(await conveyor.getPullRequest(created.number)).toEqual({
      number: created.number,
      state: "open",
      merged: false,
      mergeable: true,
      headRef: "conveyor/7-widget",
      headSha: created.headSha,
      baseRef: "main",
    });
    const diff = await conveyor.getPullRequestDiff(created.number);
    expect(diff).toContain("diff --git a/src/app.txt b/src/app.txt");
    expect(diff).toContain("+four");

    await conveyor.updatePullRequest(created.number, { title: "Widget: four", body: "Fixes nothing" });
    expect(await conveyor.getIssue(created.number)).toMatchObject({
      title: "Widget: four",
      body: "Fixes nothing",
      isPullRequest: true,
    });
    await conveyor.updatePullRequest(created.number, { state: "closed" });
    expect((await conveyor.getPullRequest(created.number)).state).toBe("closed");
    await conveyor.updatePullRequest(created.number, { state: "open" });
    expect((await conveyor.getPullRequest(created.number)).state).toBe("open");
  });

  it("a second pull request for the same head and base is refused with 409", async () => {
    await openPull("twice", { "twice.txt": "1\n" });

    const again = conveyor.createPullRequest({ head: "twice", base: "main", title: "Again", body: "" });

    await expect(again).rejects.toMatchObject({ name: "ForgeHttpError", status: 409 });
  });

  it("getCombinedStatus: latest status per context, the worst one wins", async () => {
    const { headSha } = await openPull("statuses", { "statuses.txt": "s\n" });
    const post = (context: string, state: string) =>
      api(forge, conveyorToken, "POST", `/repos/${REPO}/statuses/${headSha}`, {
        context,
        state,
        target_url: `https://ci.example/${context}`,
        description: `${context} is ${state}`,
      });

    expect(await conveyor.getCombinedStatus(headSha)).toEqual({ state: "pending", statuses: [] });
    await post("ci/a", "pending");
    await post("ci/b", "success");
    expect((await conveyor.getCombinedStatus(headSha)).state).toBe("pending");
    await post("ci/a", "failure");
    expect((await conveyor.getCombinedStatus(headSha)).state).toBe("failure");
    await post("ci/a", "success");
    // A branch name with a slash works as the ref too (the client encodes it as %2F).
    expect(await conveyor.getCombinedStatus("statuses")).toEqual({
      state: "success",
      statuses: [
        {
          context: "ci/b",
          state: "success",
          targetUrl: "https://ci.example/ci/b",
          description: "ci/b is success",
        },
        {
          context: "ci/a",
          state: "success",
          targetUrl: "https://ci.example/ci/a",
          description: "ci/a is success",
        },
      ],
    });
    await post("ci/c", "warning");
    expect((await conveyor.getCombinedStatus(headSha)).state).toBe("failure");
    await post("ci/d", "error");
    expect((await conveyor.getCombinedStatus(headSha)).state).toBe("error");
  });

  it("mergePullRequest writes a real merge commit, closes the issue it fixes, then reports already_merged", async () => {
    const issue = await conveyor.createIssue({ title: "Add five", body: "", labels: [] });
    const pull = await openPull("conveyor/five", { "five.txt": "5\n" }, `Fixes #${issue.number}`);

    expect(await conveyor.mergePullRequest(pull.number, { method: "merge", sha: pull.headSha })).toEqual({
      kind: "merged",
      merged: true,
    });
    expect(await conveyor.getPullRequest(pull.number)).toMatchObject({ state: "closed", merged: true });
    await checkout.run("fetch", "--quiet", "origin");
    const [parents = "", subject] = (await checkout.run("log", "-1", "--format=%P%n%s", "origin/main")).split(
      "\n",
    );
    expect(parents.split(" ")).toEqual([expect.stringMatching(/^[0-9a-f]{40}$/), pull.headSha]);
    expect(subject).toBe(
      `Merge pull request 'Work on conveyor/five' (#${pull.number}) from conveyor/five into main`,
    );
    expect((await conveyor.getIssue(issue.number)).state).toBe("closed");

    expect(await conveyor.mergePullRequest(pull.number, { method: "merge" })).toEqual({
      kind: "already_merged",
      merged: true,
    });
  });

  it.each(["forgejo", "github"] as const)(
    "deleteBranch (%s paths) removes a merged branch; deleting it again succeeds; the default branch stays",
    async (kind) => {
      const client = clientFor(forge, conveyorToken, REPO, kind);
      const pull = await openPull(`conveyor/gone-${kind}`, { [`gone-${kind}.txt`]: "x\n" });
      await conveyor.mergePullRequest(pull.number, { method: "merge" });
      expect(await conveyor.getBranchHead(`conveyor/gone-${kind}`)).toBe(pull.headSha);

      await client.deleteBranch(`conveyor/gone-${kind}`);
      expect(await conveyor.getBranchHead(`conveyor/gone-${kind}`)).toBeNull();
      await checkout.run("fetch", "--quiet", "--prune", "origin");
      expect(await checkout.run("branch", "--remotes", "--list", `origin/conveyor/gone-${kind}`)).toBe("");
      await client.deleteBranch(`conveyor/gone-${kind}`);

      await expect(client.deleteBranch("main")).rejects.toBeInstanceOf(ForgeHttpError);
      expect(await conveyor.getBranchHead("main")).toMatch(/^[0-9a-f]{40}$/);
    },
  );

  it("squash and rebase merges", async () => {
    const squash = await openPull("squash-me", { "squash.txt": "s\n" });
    expect((await conveyor.mergePullRequest(squash.number, { method: "squash" })).kind).toBe("merged");
    await checkout.run("fetch", "--quiet", "origin");
    expect(await checkout.run("log", "-1", "--format=%s|%P", "origin/main")).toMatch(
      new RegExp(`^Work on squash-me \\(#${squash.number}\\)\\|[0-9a-f]{40}$`),
    );

    const rebase = await openPull("rebase-me", { "rebase.txt": "r\n" });
    expect((await conveyor.mergePullRequest(rebase.number, { method: "rebase" })).kind).toBe("merged");
    await checkout.run("fetch", "--quiet", "origin");
    expect(await checkout.run("log", "-1", "--format=%s", "origin/main")).toBe("change rebase-me");
    expect(await checkout.run("show", "origin/main:squash.txt")).toBe("s");
  });

  it("mergePullRequest reports a conflict, a moved head and a closed pull request as not mergeable", async () => {
    const first = await openPull("edit-a", { "src/app.txt": "one\nTWO\nthree\n" });
    const second = await openPull("edit-b", { "src/app.txt": "one\n2\nthree\n" });
    await conveyor.mergePullRequest(first.number, { method: "merge" });

    expect((await conveyor.getPullRequest(second.number)).mergeable).toBe(false);
    expect(await conveyor.mergePullRequest(second.number, { method: "merge" })).toEqual({
      kind: "not_mergeable",
      merged: false,
      status: 405,
      reason: "Please try again later",
    });

    const moved = await openPull("moved", { "moved.txt": "m\n" });
    expect(await conveyor.mergePullRequest(moved.number, { method: "merge", sha: "0".repeat(40) })).toEqual({
      kind: "not_mergeable",
      merged: false,
      status: 409,
      reason: "head out of date",
    });

    await conveyor.updatePullRequest(moved.number, { state: "closed" });
    expect(await conveyor.mergePullRequest(moved.number, { method: "merge" })).toEqual({
      kind: "not_mergeable",
      merged: false,
      status: 404,
      reason: "pull request is closed",
    });
  });

  it("getMergeability and updateBranch: a pull request behind is updated by a merge of the base; a conflict is refused", async () => {
    await checkout.reset("main");
    await checkout.commitAndPush("main", { "stay/lines.txt": "a\nb\nc\n" });
    const behind = await openPull("stay-behind", { "stay/other.txt": "x\n" });
    const conflicting = await openPull("stay-conflict", { "stay/lines.txt": "a\nmine\nc\n" });
    expect(await conveyor.getMergeability(behind.number)).toEqual({ kind: "current" });

    await checkout.reset("main");
    const base = await checkout.commitAndPush("main", { "stay/lines.txt": "a\ntheirs\nc\n" });
    expect(await conveyor.getMergeability(behind.number)).toEqual({ kind: "behind" });
    // Not mergeable, naming no files: a conflict, or Gitea's re-check after the base moved (read again).
    expect(await conveyor.getMergeability(conflicting.number)).toEqual({ kind: "checking" });

    expect(await conveyor.updateBranch(behind.number, behind.headSha)).toBe("updated");
    const updated = await conveyor.getPullRequest(behind.number);
    expect(updated.headSha).not.toBe(behind.headSha);
    await checkout.run("fetch", "--quiet", "origin");
    expect((await checkout.run("log", "-1", "--format=%P", updated.headSha)).trim().split(" ")).toEqual([
      behind.headSha,
      base,
    ]);
    expect(await conveyor.getMergeability(behind.number)).toEqual({ kind: "current" });

    expect(await conveyor.updateBranch(conflicting.number, conflicting.headSha)).toBe("conflict");
    expect((await conveyor.getPullRequest(conflicting.number)).headSha).toBe(conflicting.headSha);
  });

  it.each(["forgejo", "github"] as const)(
    "getCommitParents (%s paths): a commit's parents, first first; a merge's two",
    async (kind) => {
      const client = clientFor(forge, conveyorToken, REPO, kind);
      const pull = await openPull(`parents-${kind}`, { [`parents-${kind}.txt`]: "x\n" });
      const before = await conveyor.getBranchHead("main");
      await conveyor.mergePullRequest(pull.number, { method: "merge" });
      const merge = (await conveyor.getBranchHead("main")) ?? "";
      expect(await client.getCommitParents(merge)).toEqual([before, pull.headSha]);
      expect(await client.getCommitParents(pull.headSha)).toHaveLength(1);
      await expect(client.getCommitParents("0".repeat(40))).rejects.toBeInstanceOf(ForgeHttpError);
    },
  );

  it("closeIssue", async () => {
    const { number } = await conveyor.createIssue({ title: "Done", body: "", labels: [] });

    await conveyor.closeIssue(number);
    await conveyor.closeIssue(number);

    expect((await conveyor.getIssue(number)).state).toBe("closed");
  });

  it("getAuthenticatedUser names the token's own user", async () => {
    expect(await conveyor.getAuthenticatedUser()).toBe("conveyor");
    expect(await alice.getAuthenticatedUser()).toBe("alice");
  });

  it("getPermission: owner and admins read as admin, collaborators as their level, others as none", async () => {
    const permissions = Object.fromEntries(
      await Promise.all(
        ["acme", "forge-admin", "conveyor", "alice", "bob", "stranger", "nobody-at-all"].map(
          async (login) => [login, await conveyor.getPermission(login)] as const,
        ),
      ),
    );

    expect(permissions).toEqual({
      acme: "admin",
      "forge-admin": "admin",
      conveyor: "admin",
      alice: "write",
      bob: "read",
      stranger: "none",
      "nobody-at-all": "none",
    });
  });

  it("createReview; approving one's own pull request is refused, as on Gitea", async () => {
    const pull = await openPull("reviewed", { "reviewed.txt": "r\n" });

    const approval = await alice.createReview(pull.number, { event: "APPROVE", body: "LGTM" });
    const changes = await alice.createReview(pull.number, {
      event: "REQUEST_CHANGES",
      body: "One thing",
      comments: [{ path: "reviewed.txt", line: 1, body: "nit" }],
    });
    const note = await conveyor.createReview(pull.number, { event: "COMMENT", body: "Self-review notes" });
    const own = conveyor.createReview(pull.number, { event: "APPROVE", body: "I approve myself" });

    await expect(own).rejects.toBeInstanceOf(ForgeHttpError);
    await expect(own).rejects.toMatchObject({
      status: 422,
      forgeMessage: "approve your own pull is not allowed",
    });
    const reviews = await apiGet<{ id: number; state: string }[]>(
      forge,
      forge.admin.token,
      `/repos/${REPO}/pulls/${pull.number}/reviews`,
    );
    expect(reviews.map((review) => [review.id, review.state])).toEqual([
      [approval.id, "APPROVED"],
      [changes.id, "REQUEST_CHANGES"],
      [note.id, "COMMENT"],
    ]);
  });

  it("listReviews and listReviewComments: states, the lines and their hunks; a dismissed review says so", async () => {
    const pull = await openPull("commented", { "src/reviewed.txt": "one\nTWO\nthree\n" });
    const changes = await alice.createReview(pull.number, {
      event: "REQUEST_CHANGES",
      body: "Keep the case.",
      comments: [{ path: "src/reviewed.txt", line: 2, body: "lowercase, please" }],
    });
    await conveyor.createReview(pull.number, { event: "COMMENT", body: "noted" });
    expect(await conveyor.listReviewComments(pull.number, changes.id)).toEqual([
      {
        id: expect.any(Number),
        path: "src/reviewed.txt",
        line: 2,
        diffHunk: "@@ -0,0 +1,2 @@\n+one\n+TWO",
        body: "lowercase, please",
        author: "alice",
      },
    ]);
    // Only a repository admin dismisses (as on Gitea, which keeps the review's state and marks it dismissed): the
    // client reads it as dismissed, so a dismissed approval is never counted as one.
    const dismissal = `/repos/${REPO}/pulls/${pull.number}/reviews/${changes.id}/dismissals`;
    const refused = await api(forge, aliceToken, "POST", dismissal, { message: "x" });
    expect(refused.status).toBe(403);
    expect((await api(forge, conveyorToken, "POST", dismissal, { message: "outdated" })).status).toBe(200);
    const reviews = await conveyor.listReviews(pull.number);
    expect(reviews.map((r) => [r.author, r.state, r.dismissed])).toEqual([
      ["alice", "dismissed", true],
      ["conveyor", "commented", false],
    ]);
  });

  it("createWebhook", async () => {
    const { id } = await conveyor.createWebhook({
      url: "http://127.0.0.1:9/hook",
      secret: "s3cret",
      events: ["issues", "issue_comment", "pull_request", "pull_request_review", "push"],
    });

    const hooks = await (await api(forge, conveyorToken, "GET", `/repos/${REPO}/hooks`)).json();
    expect(hooks).toEqual([
      expect.objectContaining({
        id,
        type: "forgejo",
        active: true,
        config: { content_type: "json", url: "http://127.0.0.1:9/hook", http_method: "post" },
        events: ["issues", "issue_comment", "pull_request", "pull_request_review", "push"],
      }),
    ]);
  });

  it("readDirectory reads a directory's files at a ref, in path order, up to maxFiles; a missing one is empty", async () => {
    await checkout.reset("main");
    await checkout.commitAndPush("agents-dir", {
      ".conveyor/agents/b.md": "bee ✓\n",
      ".conveyor/agents/a.md": "ay\n",
      ".conveyor/agents/c.md": "sea\n",
      ".conveyor/agents/nested/d.md": "not read: a directory\n",
    });
    const files = await conveyor.readDirectory(".conveyor/agents/", "agents-dir", 2);
    expect([...files]).toEqual([
      [".conveyor/agents/a.md", "ay\n"],
      [".conveyor/agents/b.md", "bee ✓\n"],
      [".conveyor/agents/c.md", ""],
    ]);
    expect(await conveyor.readDirectory(".conveyor/agents", "main", 20)).toEqual(new Map());
  });

  it("fileIds gives the blob ids of those paths that are regular files at a ref, at the root or deeper", async () => {
    await checkout.reset("main");
    const files = { "top.sh": "echo top\n", "scripts/run.sh": "echo run\n", "scripts/sub/a.txt": "a\n" };
    const first = await checkout.commitAndPush("file-ids", files);
    await checkout.run("rm", "--quiet", "top.sh");
    await checkout.run("commit", "--quiet", "-m", "top.sh gone");
    const later = await checkout.run("rev-parse", "HEAD");
    await checkout.run("push", "--quiet", "origin", "HEAD:refs/heads/file-ids");
    const blob = async (path: string) => checkout.run("rev-parse", `HEAD:${path}`);
    const asked = [
      "top.sh",
      "scripts/run.sh",
      "scripts/sub",
      "scripts/missing.sh",
      "nowhere/x.sh",
      "top.sh/x",
    ];
    expect(await conveyor.fileIds(asked, first)).toEqual(
      new Map([
        ["top.sh", createHash("sha1").update(`blob 9\0${files["top.sh"]}`).digest("hex")],
        ["scripts/run.sh", await blob("scripts/run.sh")],
      ]),
    );
    expect(await conveyor.fileIds(asked, later)).toEqual(
      new Map([["scripts/run.sh", await blob("scripts/run.sh")]]),
    );
    expect(await conveyor.fileIds([], "main")).toEqual(new Map());
  });
});

import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { git } from "../../support/forge/git/exec.ts";
import { startLocalForge } from "../../support/forge/index.ts";
import { Checkout, clientFor, startReceiver, tempDir } from "./harness.ts";

const REPO = "acme/kept";

describe("persistence", () => {
  const cleanups: (() => Promise<void>)[] = [];

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("keeps users, tokens, issues, pull requests, statuses, hooks, deliveries and repositories across a restart", async () => {
    const dataDir = await tempDir("persist");
    const cloneDir = await tempDir("persist-clone");
    const receiver = await startReceiver();
    cleanups.push(
      () => rm(dataDir, { recursive: true, force: true }),
      () => rm(cloneDir, { recursive: true, force: true }),
      receiver.close,
    );

    const first = await startLocalForge({ dataDir });
    await first.createRepo({ owner: "acme", name: "kept", seed: { files: { "ci.sh": "exit 0\n" } } });
    const { token } = first.createUser("keeper");
    first.addCollaborator(REPO, "keeper", "admin");
    const client = clientFor(first, token, REPO);
    await client.createWebhook({ url: receiver.url, secret: "s", events: ["issues", "pull_request"] });
    const issue = await client.createIssue({ title: "Remember me", body: "…", labels: ["backlog"] });
    await client.comment(issue.number, "noted");
    const checkout = await Checkout.clone(first.cloneUrl(REPO, token), join(cloneDir, "kept"));
    await checkout.commitAndPush("feature", { "feature.txt": "f\n" });
    const pull = await client.createPullRequest({
      head: "feature",
      base: "main",
      title: "Feature",
      body: "",
    });
    await first.settled();
    const deliveries = first.deliveries().length;
    await first.close();

    expect((await readdir(dataDir)).sort()).toEqual(["ci", "repos", "state.json"]);
    JSON.parse(await readFile(join(dataDir, "state.json"), "utf8"));
    // A push straight into the bare repository while the forge is down is picked up at the next start.
    await checkout.run("push", "--quiet", join(dataDir, "repos/acme/kept.git"), "HEAD:refs/heads/offline");

    const second = await startLocalForge({ dataDir });
    cleanups.push(second.close);
    const again = clientFor(second, token, REPO);

    expect(second.url).not.toBe(first.url);
    expect(second.admin).toEqual(first.admin);
    expect(await again.getIssue(issue.number)).toMatchObject({ title: "Remember me", labels: ["backlog"] });
    expect((await again.listComments(issue.number)).map((comment) => comment.body)).toEqual(["noted"]);
    expect(await again.getPullRequest(pull.number)).toMatchObject({ headSha: pull.headSha, mergeable: true });
    expect((await again.getCombinedStatus(pull.headSha)).state).toBe("success");
    expect(second.deliveries()).toHaveLength(deliveries);
    expect(second.ciRuns()).toHaveLength(1);
    expect((await again.createIssue({ title: "Next", body: "", labels: [] })).number).toBe(pull.number + 1);
    const offline = await again.createPullRequest({
      head: "offline",
      base: "main",
      title: "Offline",
      body: "",
    });
    expect(offline.headSha).toBe(pull.headSha);
    const { stdout } = await git(["ls-remote", second.cloneUrl(REPO, token)]);
    expect(stdout).toContain(`${pull.headSha}\trefs/heads/feature`);
  });

  it("cancels a CI run on close and reports it canceled", async () => {
    const dataDir = await tempDir("persist-ci");
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const forge = await startLocalForge({ dataDir });
    await forge.createRepo({ owner: "acme", name: "slow", seed: { files: { "ci.sh": "sleep 30\n" } } });
    const client = clientFor(forge, forge.admin.token, "acme/slow");
    const checkout = await Checkout.clone(
      forge.cloneUrl("acme/slow", forge.admin.token),
      join(dataDir, "clone"),
    );
    await checkout.commitAndPush("slow", { "x.txt": "x\n" });
    const pull = await client.createPullRequest({ head: "slow", base: "main", title: "Slow", body: "" });
    while (forge.ciRuns()[0]?.status !== "running") await new Promise((tick) => setTimeout(tick, 20));

    const started = performance.now();
    await forge.close();

    expect(performance.now() - started).toBeLessThan(2_000);
    const reopened = await startLocalForge({ dataDir });
    cleanups.push(reopened.close);
    expect(reopened.ciRuns()[0]?.status).toBe("killed");
    expect(
      await clientFor(reopened, reopened.admin.token, "acme/slow").getCombinedStatus(pull.headSha),
    ).toMatchObject({
      state: "failure",
      statuses: [{ description: "Pipeline was canceled" }],
    });
  });
});

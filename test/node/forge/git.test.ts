import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git } from "../../support/forge/git/exec.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { api, Checkout, clientFor, startForge } from "./harness.ts";

const REPO = "acme/tools";

let forge: LocalForge;
let cleanup: () => Promise<void>;
let work: string;
let writer: string;
let reader: string;

beforeAll(async () => {
  ({ forge, workDir: work, cleanup } = await startForge({ ci: { enabled: false } }));
  await forge.createRepo({
    owner: "acme",
    name: "tools",
    private: true,
    seed: { files: { "README.md": "tools\n" } },
  });
  writer = forge.createUser("writer").token;
  reader = forge.createUser("reader").token;
  forge.addCollaborator(REPO, "writer", "write");
  forge.addCollaborator(REPO, "reader", "read");
});

afterAll(async () => {
  await cleanup();
});

/** `git` as a script would run it: no prompts, so a refusal fails at once. */
function tryGit(args: string[], cwd = work) {
  return git(args, { cwd, ok: [0, 128] });
}

describe("git smart HTTP", () => {
  it("clones with a token as Basic credentials, with or without .git", async () => {
    const withSuffix = await Checkout.clone(forge.cloneUrl(REPO, writer), join(work, "with-suffix"));
    const without = forge.cloneUrl(REPO, reader).replace(/\.git$/, "");
    const plain = await Checkout.clone(without, join(work, "without-suffix"));

    expect(await withSuffix.run("log", "--format=%s")).toBe("Initial commit");
    expect(await plain.run("rev-parse", "HEAD")).toBe(await withSuffix.run("rev-parse", "HEAD"));
  });

  it("answers 401 without credentials and with a wrong token", async () => {
    const anonymous = await tryGit(["clone", "--quiet", `${forge.url}/${REPO}.git`, "anonymous"]);
    const wrong = await tryGit(["clone", "--quiet", forge.cloneUrl(REPO, "0".repeat(40)), "wrong"]);
    const response = await fetch(`${forge.url}/${REPO}.git/info/refs?service=git-upload-pack`);

    expect(anonymous.code).toBe(128);
    expect(wrong.code).toBe(128);
    expect(wrong.stderr).toContain("Authentication failed");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Basic realm="Gitea"');
  });

  it("refuses a push from a reader (403) and a clone of a private repository by a stranger (404)", async () => {
    const clone = await Checkout.clone(forge.cloneUrl(REPO, reader), join(work, "reader"));
    await clone.run("commit", "--quiet", "--allow-empty", "-m", "sneaky");
    const push = await tryGit(["push", "--quiet", "origin", "HEAD:refs/heads/sneaky"], clone.dir);
    const stranger = forge.createUser("outsider").token;
    const strangerClone = await tryGit(["clone", "--quiet", forge.cloneUrl(REPO, stranger), "outsider"]);

    expect(push.code).toBe(128);
    expect(push.stderr).toContain("403");
    expect(strangerClone.code).toBe(128);
    expect(strangerClone.stderr).toContain("not found");
  });

  it("a push moves the pull request head before `git push` returns, large pushes included", async () => {
    const clone = await Checkout.clone(forge.cloneUrl(REPO, writer), join(work, "pusher"));
    await clone.commitAndPush("feature", { "feature.txt": "1\n" });
    const client = clientFor(forge, writer, REPO);
    const pull = await client.createPullRequest({
      head: "feature",
      base: "main",
      title: "Feature",
      body: "",
    });

    // Above http.postBuffer (1 MiB), git sends the pack chunked, without Content-Length.
    await writeFile(join(clone.dir, "blob.bin"), randomBytes(3 * 1024 * 1024));
    const next = await clone.commitAndPush("feature", { "feature.txt": "2\n" });

    expect(next).not.toBe(pull.headSha);
    expect((await client.getPullRequest(pull.number)).headSha).toBe(next);
    const refs = await tryGit(["ls-remote", forge.cloneUrl(REPO, reader)]);
    expect(refs.stdout).toContain(`${next}\trefs/heads/feature`);
    expect(refs.stdout).toContain(`${next}\trefs/pull/${pull.number}/head`);
  });

  it("serves no git and no API to a request without a token", async () => {
    const response = await api(forge, null, "GET", `/repos/${REPO}`);
    const wrong = await api(forge, "not-a-token", "GET", `/repos/${REPO}`);

    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ message: "token is required" });
    expect(wrong.status).toBe(401);
  });
});

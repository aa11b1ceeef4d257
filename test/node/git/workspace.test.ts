import { existsSync, lstatSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitError, git } from "../../../runner/git/exec.ts";
import { PushRefusedError, PushRejectedError, Workspace } from "../../../runner/git/workspace.ts";
import { running } from "../runner/support/processes.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, type Upstream } from "./support.ts";
import { upstreamTemplate } from "./upstream-template.ts";

const USERNAME = "conveyor-bot";
const TOKEN = "tok-7f3a9c1e5b2d4680";
const REPO = "acme/widgets";

let root = "";
let upstream: Upstream;
let server: GitHttpServer;
let remoteUrl = "";

const template = upstreamTemplate();

beforeEach(async () => {
  root = await tempDir("workspace");
  upstream = await template.copyTo(root);
  server = await startGitHttpServer(root, USERNAME, TOKEN);
  remoteUrl = server.url("upstream.git");
});

afterEach(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

const workspace = (name = "work", token = TOKEN) =>
  new Workspace({ workDir: join(root, name), credential: { username: USERNAME, token } });

/** What a job does before its session starts. */
async function prepare(ws: Workspace, issueNumber = 7) {
  await ws.ensureMirror({ repoKey: REPO, remoteUrl });
  return ws.ensureWorktree({ repoKey: REPO, issueNumber, baseBranch: "main" });
}

/** Who the agent commits as, in tests that commit in a worktree as its session would. */
const identity = {
  GIT_AUTHOR_NAME: "a",
  GIT_AUTHOR_EMAIL: "a@x",
  GIT_COMMITTER_NAME: "a",
  GIT_COMMITTER_EMAIL: "a@x",
};

const inWorktree = (path: string, args: string[]) => git(args, { cwd: path }).then((out) => out.trim());
const head = (path: string) => inWorktree(path, ["rev-parse", "HEAD"]);
/** What a job does after its session: leftovers committed, the branch taken into the private repository. */
const commit = async (ws: Workspace, message: string, issueNumber = 7) =>
  (await ws.collect({ repoKey: REPO, issueNumber }, message)).sha;

describe("ensureMirror", () => {
  it("clones once, then only fetches into the same mirror", async () => {
    const ws = workspace();
    const mirror = await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    expect(mirror).toBe(join(ws.workDir, "mirrors", "acme__widgets.git"));
    const before = await stat(mirror);
    await writeFile(join(mirror, "marker"), "kept");

    const newer = await upstream.commit({ "src/c.txt": "c\n" }, "add c");
    await git(["-C", upstream.path, "branch", "feature", "main"]);
    expect(await ws.ensureMirror({ repoKey: REPO, remoteUrl })).toBe(mirror);

    expect((await stat(mirror)).ino).toBe(before.ino);
    expect(await readFile(join(mirror, "marker"), "utf8")).toBe("kept");
    expect(await refs(mirror)).toEqual({
      "refs/remotes/origin/feature": newer,
      "refs/remotes/origin/main": newer,
    });
    expect(await readdir(join(ws.workDir, "mirrors"))).toEqual(["acme__widgets.git"]);
  });

  it("prunes branches deleted upstream", async () => {
    const ws = workspace();
    await git(["-C", upstream.path, "branch", "feature", "main"]);
    const mirror = await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    await git(["-C", upstream.path, "branch", "-D", "feature"]);
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    expect(Object.keys(await refs(mirror))).toEqual(["refs/remotes/origin/main"]);
  });

  it("leaves nothing behind when the first fetch fails, and never shows the token", async () => {
    const ws = workspace("work", "wrong-token-0123456789");
    const error = await ws.ensureMirror({ repoKey: REPO, remoteUrl }).catch((e) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(error.message).toContain(`git fetch --quiet --prune --no-tags ${remoteUrl}`);
    expect(`${error.message}\n${error.stderr}`).not.toContain("wrong-token");
    expect(await readdir(join(ws.workDir, "mirrors"))).toEqual([]);
  });

  it.each([
    ["a password in the URL", REPO, "https://bot:secret@forge.example/acme/widgets.git", /password/],
    ["a path remote with a credential", REPO, "/srv/git/widgets.git", /http\(s\)/],
    ["an ssh remote with a credential", REPO, "ssh://git@forge.example/acme/widgets.git", /http\(s\)/],
    ["a key with three parts", "acme/widgets/x", "https://forge.example/x.git", /repository key/],
    ["a key climbing out", "../widgets", "https://forge.example/x.git", /repository key/],
    ["an owner with __", "ac__me/widgets", "https://forge.example/x.git", /repository key/],
  ])("refuses %s", async (_name, repoKey, url, message) => {
    await expect(workspace().ensureMirror({ repoKey, remoteUrl: url })).rejects.toThrow(message);
  });
});

describe("ensureWorktree", () => {
  it("creates conveyor/<issue> from the base branch, without tracking config", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    expect(wt).toEqual({
      path: join(ws.workDir, "worktrees", "acme__widgets", "7"),
      branch: "conveyor/7",
      from: "base",
    });
    expect(await inWorktree(wt.path, ["symbolic-ref", "HEAD"])).toBe("refs/heads/conveyor/7");
    expect(await head(wt.path)).toBe(await upstream.sha("main"));
    expect(await readFile(join(wt.path, "src/b.txt"), "utf8")).toBe("b\n");
    expect(await inWorktree(wt.path, ["config", "--list"])).not.toContain("branch.");
  });

  it("keeps the worktree and the agent's uncommitted work across iterations", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await writeFile(join(wt.path, "src/a.txt"), "changed\n");
    const commitsOnMain = await upstream.commit({ "src/c.txt": "c\n" }, "meanwhile on main");

    expect(await prepare(ws)).toEqual({ ...wt, from: "existing" });
    expect(await readFile(join(wt.path, "new.txt"), "utf8")).toBe("agent\n");
    expect(await readFile(join(wt.path, "src/a.txt"), "utf8")).toBe("changed\n");
    // The base moved on; the branch does not follow it by itself (rebasing is the session's call).
    expect(await head(wt.path)).not.toBe(commitsOnMain);
  });

  it("recreates a deleted worktree from its local branch", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    const sha = await commit(ws, "work");
    await rm(wt.path, { recursive: true, force: true });

    expect(await prepare(ws)).toEqual({ ...wt, from: "local_branch" });
    expect(await head(wt.path)).toBe(sha);
  });

  it("rebuilds from the pushed branch on a runner that never saw the issue", async () => {
    const first = workspace("first");
    const wt = await prepare(first);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await commit(first, "work");
    const pushed = await first.push({ repoKey: REPO, issueNumber: 7 });

    const second = workspace("second");
    const rebuilt = await prepare(second);
    expect(rebuilt.from).toBe("remote_branch");
    expect(await head(rebuilt.path)).toBe(pushed);
    expect(await readFile(join(rebuilt.path, "new.txt"), "utf8")).toBe("agent\n");
    expect(await inWorktree(rebuilt.path, ["symbolic-ref", "HEAD"])).toBe("refs/heads/conveyor/7");
  });

  it("rebuilds from the pushed branch when a leftover local branch does not contain it", async () => {
    const first = workspace("first");
    const second = workspace("second");
    const theirs = await prepare(second);
    await writeFile(join(theirs.path, "theirs.txt"), "second\n");
    await commit(second, "theirs");
    const pushed = await second.push({ repoKey: REPO, issueNumber: 7 });

    await first.ensureMirror({ repoKey: REPO, remoteUrl });
    await git(["-C", first.mirrorPath(REPO), "branch", "conveyor/7", "refs/remotes/origin/main"]);
    const wt = await first.ensureWorktree({ repoKey: REPO, issueNumber: 7, baseBranch: "main" });
    expect(wt.from).toBe("remote_branch");
    expect(await head(wt.path)).toBe(pushed);
  });

  it("rebuilds a worktree whose creation a killed runner left half done, rather than keep an empty repository", async () => {
    const ws = workspace();
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    // Killed between `git init` of the worktree and its checkout: a repository on no commit, no branch recorded.
    const path = ws.worktreePath({ repoKey: REPO, issueNumber: 7 });
    await mkdir(dirname(path), { recursive: true });
    await git(["init", "--quiet", "--template=", path], { cwd: dirname(path) });
    await mkdir(join(path, ".git", "objects", "info"), { recursive: true });
    await writeFile(
      join(path, ".git", "objects", "info", "alternates"),
      `${join(ws.mirrorPath(REPO), "objects")}\n`,
    );

    const wt = await prepare(ws);
    expect(wt).toEqual({ path, branch: "conveyor/7", from: "base" });
    expect(await inWorktree(path, ["branch", "--show-current"])).toBe("conveyor/7");
    // A session's work is collected from it as from any other.
    await writeFile(join(path, "one.txt"), "1\n");
    expect((await ws.collect({ repoKey: REPO, issueNumber: 7 }, "one")).committedLeftovers).toBe(true);
  });

  it("clears the git locks a killed session left in a kept worktree, so its next commit succeeds", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "one.txt"), "1\n");
    await commit(ws, "one");
    // Killed mid-`git status` or mid-commit: its locks stay behind.
    const gitDir = join(wt.path, ".git");
    await writeFile(join(gitDir, "index.lock"), "");
    await writeFile(join(gitDir, "refs", "heads", "conveyor", "7.lock"), "");
    await symlink(join(gitDir, "config"), join(gitDir, "kept.lock"));

    expect(await prepare(ws)).toMatchObject({ from: "existing" });
    await writeFile(join(wt.path, "two.txt"), "2\n");
    await git(["add", "two.txt"], { cwd: wt.path });
    await git(["commit", "-qm", "the agent's"], { cwd: wt.path, env: identity });
    expect(await inWorktree(wt.path, ["log", "-1", "--format=%s"])).toBe("the agent's");
    // Not a lock file of git's making: a symbolic link is left alone, and so is what it points to.
    expect(lstatSync(join(gitDir, "kept.lock")).isSymbolicLink()).toBe(true);
  });

  it("resets a stale worktree to the branch another runner pushed", async () => {
    const first = workspace("first");
    const wt = await prepare(first);
    await writeFile(join(wt.path, "one.txt"), "1\n");
    await commit(first, "one");
    await first.push({ repoKey: REPO, issueNumber: 7 });
    await writeFile(join(wt.path, "stale.txt"), "left over\n");

    const second = workspace("second");
    const theirs = await prepare(second);
    await writeFile(join(theirs.path, "two.txt"), "2\n");
    await commit(second, "two");
    const pushed = await second.push({ repoKey: REPO, issueNumber: 7 });

    expect(await prepare(first)).toEqual({ ...wt, from: "remote_branch" });
    expect(await head(wt.path)).toBe(pushed);
    expect(existsSync(join(wt.path, "two.txt"))).toBe(true);
    expect(existsSync(join(wt.path, "stale.txt"))).toBe(false);
    expect(await inWorktree(wt.path, ["status", "--porcelain"])).toBe("");
  });

  it("replaces what is not a worktree of its own making (a linked worktree of an older runner)", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await rm(join(wt.path, ".git"), { recursive: true, force: true });
    await writeFile(join(wt.path, ".git"), `gitdir: ${ws.mirrorPath(REPO)}/worktrees/7\n`);
    expect((await prepare(ws)).from).toBe("local_branch");
    expect(await git(["rev-parse", "--git-dir"], { cwd: wt.path })).toBe(".git\n");
  });

  it("borrows the private repository's objects instead of copying them", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    expect(await readFile(join(wt.path, ".git", "objects", "info", "alternates"), "utf8")).toBe(
      `${ws.objectsPath(REPO)}\n`,
    );
    expect(await inWorktree(wt.path, ["count-objects"])).toMatch(/^0 objects/);
    expect(await inWorktree(wt.path, ["rev-parse", "refs/remotes/origin/main"])).toBe(
      await upstream.sha("main"),
    );
  });

  it("gives two issues started at once on a fresh runner two worktrees", async () => {
    const ws = workspace();
    const [seven, eight] = await Promise.all([prepare(ws, 7), prepare(ws, 8)]);
    expect(seven?.path).not.toBe(eight?.path);
    expect([seven?.branch, eight?.branch]).toEqual(["conveyor/7", "conveyor/8"]);

    const shas = await Promise.all(
      [7, 8].map(async (issueNumber) => {
        const path = ws.worktreePath({ repoKey: REPO, issueNumber });
        await writeFile(join(path, `issue-${issueNumber}.txt`), "x\n");
        await commit(ws, `issue ${issueNumber}`, issueNumber);
        return ws.push({ repoKey: REPO, issueNumber });
      }),
    );
    expect(shas).toEqual([await upstream.sha("conveyor/7"), await upstream.sha("conveyor/8")]);
  });
});

describe("collect", () => {
  it("commits what the agent left as Conveyor, without running hooks, into the private repository", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    const hook = join(wt.path, ".git", "hooks", "post-commit");
    await mkdir(dirname(hook), { recursive: true });
    await writeFile(hook, `#!/bin/sh\ntouch ${root}/hook-ran\n`);
    await chmod(hook, 0o755);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await rm(join(wt.path, "src/a.txt"));

    const sha = await commit(ws, "Conveyor: work on #7");
    expect(sha).toBe(await head(wt.path));
    expect((await refs(ws.mirrorPath(REPO)))["refs/heads/conveyor/7"]).toBe(sha);
    expect(existsSync(join(root, "hook-ran"))).toBe(false);
    expect(await inWorktree(wt.path, ["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"])).toBe(
      "Conveyor <conveyor@localhost>|Conveyor <conveyor@localhost>|Conveyor: work on #7",
    );
    expect(await inWorktree(wt.path, ["show", "--name-status", "--format=", "HEAD"])).toBe(
      "A\tnew.txt\nD\tsrc/a.txt",
    );
  });

  it("commits nothing when there is nothing to commit, and still takes the agent's own commits", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await git(["add", "new.txt"], { cwd: wt.path });
    await git(["commit", "-qm", "the agent's"], { cwd: wt.path, env: identity });
    expect(await ws.collect({ repoKey: REPO, issueNumber: 7 }, "nothing")).toEqual({
      sha: await head(wt.path),
      committedLeftovers: false,
    });
  });
});

describe("collected commit messages", () => {
  it("lose their closing keywords, the same way on every collection, and push as a fast-forward", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    const agentCommit = async (file: string, message: string) => {
      await writeFile(join(wt.path, file), `${file}\n`);
      await git(["add", file], { cwd: wt.path });
      await git(["commit", "-qm", message], { cwd: wt.path, env: identity });
    };
    await agentCommit(
      "one.txt",
      "Add one, fixes #2\n\nCloses: acme/widgets#3 and resolves https://x.example/i/4",
    );
    await agentCommit("two.txt", "Add two");
    const mirror = ws.mirrorPath(REPO);
    const messages = async (ref: string) =>
      (await git(["log", "--format=%B%x00", ref], { cwd: mirror })).split("\0\n").filter(Boolean);

    const first = await commit(ws, "nothing left");
    // Rewritten: the worktree keeps the agent's originals, the private repository holds the clean ones.
    expect(first).not.toBe(await head(wt.path));
    expect((await messages(first)).slice(0, 2)).toEqual([
      "Add two\n",
      "Add one, refs #2\n\nrefs: acme/widgets#3 and refs https://x.example/i/4\n",
    ]);
    expect(await ws.push({ repoKey: REPO, issueNumber: 7 })).toBe(first);

    // The next session commits on top of the originals: collected again, they come out the same.
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    expect((await ws.ensureWorktree({ repoKey: REPO, issueNumber: 7, baseBranch: "main" })).from).toBe(
      "existing",
    );
    await agentCommit("three.txt", "Add three, fixed #5");
    const second = await commit(ws, "nothing left");
    expect(await git(["rev-parse", `${second}~1`], { cwd: mirror })).toBe(`${first}\n`);
    expect((await messages(second))[0]).toBe("Add three, refs #5\n");
    expect(await ws.push({ repoKey: REPO, issueNumber: 7 })).toBe(second);
    expect(await upstream.sha("conveyor/7")).toBe(second);
  });

  it("are left as they are, commit for commit, when none holds a closing keyword", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "one.txt"), "one\n");
    await git(["add", "one.txt"], { cwd: wt.path });
    await git(["commit", "-qm", "This fixes the parser (see #2)"], { cwd: wt.path, env: identity });
    expect(await commit(ws, "nothing left")).toBe(await head(wt.path));
  });
});

describe("push", () => {
  it("lands conveyor/<issue> on the remote and returns the sha", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    const sha = await commit(ws, "work");
    expect(await ws.push({ repoKey: REPO, issueNumber: 7 })).toBe(sha);
    expect(await upstream.sha("conveyor/7")).toBe(sha);
    // Pushing again without new work is a no-op, not an error.
    expect(await ws.push({ repoKey: REPO, issueNumber: 7 })).toBe(sha);
  });

  it("gives up on a forge that stalls mid-push at the deadline, killing git and its helpers", async () => {
    const ws = new Workspace({
      workDir: join(root, "work"),
      credential: { username: USERNAME, token: TOKEN },
      remoteTimeoutMs: 1_500,
    });
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "stalled.txt"), "never lands\n");
    await commit(ws, "work");
    server.stallPushes = true;

    const error = await ws.push({ repoKey: REPO, issueNumber: 7 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).message).toContain("timed out after 1500 ms");
    expect(running(`remote-http.*${remoteUrl}`)).toBe(false);
    expect(await upstream.sha("conveyor/7")).toBeUndefined();
  }, 20_000);

  it("refuses to overwrite work someone else pushed", async () => {
    const first = workspace("first");
    const second = workspace("second");
    const mine = await prepare(first);
    const theirs = await prepare(second);
    await writeFile(join(theirs.path, "theirs.txt"), "x\n");
    await commit(second, "theirs");
    const pushed = await second.push({ repoKey: REPO, issueNumber: 7 });
    await writeFile(join(mine.path, "mine.txt"), "y\n");
    await commit(first, "mine");

    await expect(first.push({ repoKey: REPO, issueNumber: 7 })).rejects.toBeInstanceOf(PushRejectedError);
    expect(await upstream.sha("conveyor/7")).toBe(pushed);
  });

  /** Rewrites conveyor/7 as a rebasing session would: its own commit again, on the moved base. */
  async function rebaseOntoMain(ws: Workspace, path: string) {
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    await git(
      ["fetch", "--quiet", ws.mirrorPath(REPO), "+refs/remotes/origin/main:refs/remotes/origin/main"],
      {
        cwd: path,
      },
    );
    await inWorktree(path, ["reset", "--quiet", "--hard", "origin/main"]);
    await writeFile(join(path, "new.txt"), "agent, rebased\n");
    return commit(ws, "work, rebased");
  }

  it("force-pushes a rewritten conveyor/<issue> under the lease of the sha the Worker recorded", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await commit(ws, "work");
    const recorded = await ws.push({ repoKey: REPO, issueNumber: 7 });
    await upstream.commit({ "src/c.txt": "c\n" }, "meanwhile on main");
    const rebased = await rebaseOntoMain(ws, wt.path);

    // Without a lease a rewrite is never forced.
    await expect(ws.push({ repoKey: REPO, issueNumber: 7 })).rejects.toBeInstanceOf(PushRejectedError);
    expect(await upstream.sha("conveyor/7")).toBe(recorded);
    expect(await ws.push({ repoKey: REPO, issueNumber: 7 }, { branch: "conveyor/7", lease: recorded })).toBe(
      rebased,
    );
    expect(await upstream.sha("conveyor/7")).toBe(rebased);
  });

  it("refuses a force-push under a stale lease: what was pushed since stays", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await commit(ws, "work");
    const recorded = await ws.push({ repoKey: REPO, issueNumber: 7 });
    // Someone else pushes on top of what the Worker recorded.
    const other = workspace("other");
    const theirs = await prepare(other);
    await writeFile(join(theirs.path, "theirs.txt"), "x\n");
    await commit(other, "theirs");
    const pushed = await other.push({ repoKey: REPO, issueNumber: 7 });
    await upstream.commit({ "src/c.txt": "c\n" }, "meanwhile on main");
    await rebaseOntoMain(ws, wt.path);

    await expect(
      ws.push({ repoKey: REPO, issueNumber: 7 }, { branch: "conveyor/7", lease: recorded }),
    ).rejects.toBeInstanceOf(PushRejectedError);
    expect(await upstream.sha("conveyor/7")).toBe(pushed);
  });

  it.each([
    ["the default branch", { branch: "main" }],
    ["another issue's branch", { branch: "conveyor/8" }],
    ["a full ref name", { branch: "refs/heads/conveyor/7" }],
    ["a refspec", { branch: "conveyor/7:refs/heads/main" }],
    ["an abbreviated lease", { branch: "conveyor/7", lease: "abc1234" }],
    ["an option as the lease", { branch: "conveyor/7", lease: "--force" }],
  ])("refuses to push %s, before git runs", async (_name, options) => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await commit(ws, "work");
    const main = await upstream.sha("main");
    const lease = await upstream.sha("main");
    await expect(ws.push({ repoKey: REPO, issueNumber: 7 }, { lease, ...options })).rejects.toBeInstanceOf(
      PushRefusedError,
    );
    expect(await upstream.sha("main")).toBe(main);
    expect(await upstream.sha("conveyor/7")).toBeUndefined();
    expect(await upstream.sha("conveyor/8")).toBeUndefined();
  });

  it("needs ensureMirror first", async () => {
    const ws = workspace();
    await expect(ws.push({ repoKey: REPO, issueNumber: 7 })).rejects.toThrow(/ensureMirror/);
    await expect(ws.ensureWorktree({ repoKey: REPO, issueNumber: 7, baseBranch: "main" })).rejects.toThrow(
      /ensureMirror/,
    );
  });

  it("keeps the token out of configs, URLs, files, helpers, hooks and errors", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    const mirror = ws.mirrorPath(REPO);
    // What an agent could plant through the worktree: helpers that would be handed the token, hooks that
    // would see the push's environment.
    const stolen = join(root, "stolen");
    await git(["config", "credential.helper", `store --file=${stolen}-store`], { cwd: wt.path });
    await git(["config", `credential.${remoteUrl}.helper`, `!f() { cat >> ${stolen}-url; }; f`], {
      cwd: wt.path,
    });
    await mkdir(join(wt.path, ".git", "hooks"), { recursive: true });
    for (const name of ["pre-push", "reference-transaction", "post-update", "pre-commit"]) {
      await writeFile(join(wt.path, ".git", "hooks", name), `#!/bin/sh\nenv >> ${stolen}-hook\n`);
      await chmod(join(wt.path, ".git", "hooks", name), 0o755);
    }
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await commit(ws, "work");
    await ws.push({ repoKey: REPO, issueNumber: 7 });
    await prepare(ws);

    for (const cwd of [mirror, wt.path]) {
      expect(await git(["config", "--list", "--show-origin"], { cwd })).not.toContain(TOKEN);
    }
    expect(await filesContaining(ws.workDir, TOKEN)).toEqual([]);
    expect((await readdir(root)).filter((name) => name.startsWith("stolen"))).toEqual([]);
    expect(server.requests.map((r) => r.url).join("\n")).not.toContain(TOKEN);
    const authorized = server.requests.filter((r) => r.authorization !== undefined);
    expect(authorized.length).toBeGreaterThan(0);
    expect(
      new Set(authorized.map((r) => Buffer.from(r.authorization?.slice(6) ?? "", "base64").toString())),
    ).toEqual(new Set([`${USERNAME}:${TOKEN}`]));
  });

  it("offers the token to no other host", async () => {
    const ws = workspace();
    await prepare(ws);
    // An agent redirecting the remote elsewhere: that host asks for credentials and must get none.
    const elsewhere = await startGitHttpServer(root, "someone", "else");
    try {
      await git(["config", `url.${elsewhere.url("")}.insteadOf`, remoteUrl], { cwd: ws.mirrorPath(REPO) });
      const error = await ws.push({ repoKey: REPO, issueNumber: 7 }).catch((e) => e);
      expect(error).toBeInstanceOf(GitError);
      expect(elsewhere.requests.length).toBeGreaterThan(0);
      expect(elsewhere.requests.every((r) => r.authorization === undefined)).toBe(true);
      expect(`${error.message}\n${error.stderr}`).not.toContain(TOKEN);
    } finally {
      await elsewhere.close();
    }
  });
});

describe("an update from the base", () => {
  it("refreshes the base an existing worktree sees, and names the files in conflict and what landed", async () => {
    await upstream.commit({ "src/shared.txt": "one\ntwo\nthree\n" }, "add shared");
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "src/shared.txt"), "one\nmine\nthree\n");
    await writeFile(join(wt.path, "mine.txt"), "m\n");
    await commit(ws, "my change");
    expect(await ws.conflictWithBase({ repoKey: REPO, issueNumber: 7 }, "main")).toEqual({
      files: [],
      landed: [],
    });

    await upstream.commit({ "src/shared.txt": "one\ntheirs\nthree\n" }, "their change to shared");
    const landed = await upstream.commit({ "src/other.txt": "o\n" }, "their other change");
    const again = await prepare(ws);
    expect(again.from).toBe("existing");
    expect(await inWorktree(wt.path, ["rev-parse", "refs/remotes/origin/main"])).toBe(landed);
    expect(await ws.conflictWithBase({ repoKey: REPO, issueNumber: 7 }, "main")).toEqual({
      files: ["src/shared.txt"],
      landed: ["their other change", "their change to shared"],
    });
  });
});

describe("reap", () => {
  it("removes the worktree and the local branch, and can repeat", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "dirty.txt"), "x\n");

    await ws.reap({ repoKey: REPO, issueNumber: 7 });
    await ws.reap({ repoKey: REPO, issueNumber: 7 });
    expect(existsSync(wt.path)).toBe(false);
    expect(await refs(ws.mirrorPath(REPO))).not.toHaveProperty("refs/heads/conveyor/7");
    expect((await prepare(ws)).from).toBe("base");
  });

  it("is a no-op for a repository this runner never mirrored", async () => {
    await expect(workspace().reap({ repoKey: REPO, issueNumber: 7 })).resolves.toBeUndefined();
  });
});

describe("diffAgainstBase", () => {
  it("shows the branch's own committed changes, not the base's later ones", async () => {
    const ws = workspace();
    const wt = await prepare(ws);
    await writeFile(join(wt.path, "new.txt"), "agent\n");
    await commit(ws, "work");
    await writeFile(join(wt.path, "uncommitted.txt"), "x\n");
    await upstream.commit({ "src/c.txt": "c\n" }, "meanwhile on main");
    await prepare(ws);

    const diff = await ws.diffAgainstBase({ repoKey: REPO, issueNumber: 7 }, "main");
    expect(diff).toContain("+++ b/new.txt");
    expect(diff).not.toContain("src/c.txt");
    expect(diff).not.toContain("uncommitted.txt");
  });
});

async function refs(gitDir: string): Promise<Record<string, string>> {
  const out = await git(["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: gitDir });
  return Object.fromEntries(
    out
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split(" ")),
  );
}

async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    if ((await readFile(file)).includes(needle)) hits.push(file);
  }
  return hits;
}

describe("agentWorktree", () => {
  it("is a fresh worktree at the default branch's head, on no branch, gone when removed", async () => {
    const ws = workspace();
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    const path = await ws.agentWorktree({ repoKey: REPO, baseBranch: "main", runId: "run_1" });
    expect(path).toBe(join(ws.workDir, "agent-runs", "acme__widgets", "run_1"));
    expect(await head(path)).toBe(await upstream.sha("main"));
    // Detached: HEAD names no branch.
    expect(await inWorktree(path, ["rev-parse", "--abbrev-ref", "HEAD"])).toBe("HEAD");
    await writeFile(join(path, "scratch.txt"), "the agent's\n");

    // A run of the same id again (a later attempt) starts clean, at the head the mirror has now.
    const newer = await upstream.commit({ "src/c.txt": "c\n" }, "meanwhile on main");
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    const again = await ws.agentWorktree({ repoKey: REPO, baseBranch: "main", runId: "run_1" });
    expect(await head(again)).toBe(newer);
    expect(existsSync(join(again, "scratch.txt"))).toBe(false);

    await ws.removeAgentWorktree(REPO, "run_1");
    expect(existsSync(again)).toBe(false);
  });

  it("refuses a run id that is not a plain name", async () => {
    const ws = workspace();
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    for (const runId of ["../x", "a/b", ".hidden", ""]) {
      await expect(ws.agentWorktree({ repoKey: REPO, baseBranch: "main", runId })).rejects.toThrow(
        /bad run id/,
      );
    }
  });
});

describe("reviewWorktree", () => {
  it("is the pull request's head fetched by its ref", async () => {
    const ws = workspace();
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });
    const before = (await upstream.sha("main")) ?? "";
    const reviewed = await upstream.commit({ "src/c.txt": "c\n" }, "the pull request's change");
    await git(["-C", upstream.path, "update-ref", "refs/pull/3/head", reviewed]);
    await git(["-C", upstream.path, "update-ref", "refs/heads/main", before]);
    await ws.ensureMirror({ repoKey: REPO, remoteUrl });

    const where = { repoKey: REPO, baseBranch: "main", ref: "refs/pull/3/head" };
    const path = await ws.reviewWorktree({ ...where, runId: "run_r", headSha: reviewed });
    expect(await head(path)).toBe(reviewed);
    expect(await inWorktree(path, ["rev-parse", "--abbrev-ref", "HEAD"])).toBe("HEAD");
    expect(await inWorktree(path, ["rev-parse", "origin/main"])).toBe(before);
    expect(await inWorktree(path, ["status", "--porcelain"])).toBe("");

    // The Worker recorded another head: the runner reviews nothing rather than the wrong commit.
    await expect(ws.reviewWorktree({ ...where, runId: "run_s", headSha: before })).rejects.toThrow(
      /nothing to review/,
    );
    await ws.removeAgentWorktree(REPO, "run_r");
    await ws.removeAgentWorktree(REPO, "run_s");
    expect(existsSync(path)).toBe(false);
    const kept = await git(["for-each-ref", "refs/conveyor-reviews/"], { cwd: ws.mirrorPath(REPO) });
    expect(kept.trim()).toBe("");
  });
});

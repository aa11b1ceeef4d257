import { existsSync } from "node:fs";
import { open, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { git } from "../../../runner/git/exec.ts";
import { Workspace } from "../../../runner/git/workspace.ts";
import { tempDir, Upstream } from "./support.ts";

// A worktree reserved ahead of its content (Workspace.reserveWorktree), so that a session can start in it
// while the fetch and the checkout run: the directory a sandbox binds must stay the one that gets filled.

const REPO = "acme/widgets";
const ISSUE = { repoKey: REPO, issueNumber: 7 };

let root = "";
let upstream: Upstream;

beforeEach(async () => {
  root = await tempDir("reserved-worktree");
  upstream = await Upstream.create(root);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const workspace = () => new Workspace({ workDir: join(root, "work") });
const fill = async (ws: Workspace) => {
  await ws.ensureMirror({ repoKey: REPO, remoteUrl: `file://${upstream.path}` });
  return ws.ensureWorktree({ ...ISSUE, baseBranch: "main" });
};
const inWorktree = (path: string, args: string[]) => git(args, { cwd: path }).then((out) => out.trim());

describe("a reserved worktree", () => {
  it("is a repository before its content, and is filled in place: the same directory", async () => {
    const ws = workspace();
    await fill(ws);
    await ws.reap(ISSUE);

    expect(await ws.reserveWorktree(ISSUE)).toBe(true);
    const path = ws.worktreePath(ISSUE);
    // Held as a sandbox's bind would hold it: the directory itself, whatever its path later names.
    const held = await open(path, "r");
    onTestFinished(() => held.close());
    // What Claude Code looks at as it starts: its cwd is a repository already.
    expect(await inWorktree(path, ["rev-parse", "--is-inside-work-tree"])).toBe("true");

    const wt = await fill(ws);
    expect(wt).toEqual({ path, branch: "conveyor/7", from: "base" });
    expect(await readlink(`/proc/self/fd/${held.fd}`)).toBe(path);
    expect(await inWorktree(path, ["symbolic-ref", "HEAD"])).toBe("refs/heads/conveyor/7");
    expect(await inWorktree(path, ["rev-parse", "HEAD"])).toBe(await upstream.sha("main"));
    expect(await readFile(join(path, "src/b.txt"), "utf8")).toBe("b\n");
    expect(existsSync(`${path}.reserved`)).toBe(false);
    // And kept by the issue's next job, as any worktree.
    await writeFile(join(path, "work.txt"), "agent\n");
    expect(await fill(ws)).toEqual({ ...wt, from: "existing" });
  });

  it("is not taken where an earlier job's worktree is: whether that one is kept is the fetch's call", async () => {
    const ws = workspace();
    const wt = await fill(ws);
    await writeFile(join(wt.path, "work.txt"), "agent\n");

    expect(await ws.reserveWorktree(ISSUE)).toBe(false);
    expect(await fill(ws)).toEqual({ ...wt, from: "existing" });
    expect(await readFile(join(wt.path, "work.txt"), "utf8")).toBe("agent\n");
  });

  it("left unfilled by a killed runner is rebuilt, not kept as an empty repository on a current branch", async () => {
    const first = workspace();
    const wt = await fill(first);
    await writeFile(join(wt.path, "work.txt"), "agent\n");
    const collected = await first.collect(ISSUE, "work");
    // The worktree is gone (a session swapped its .git for a link, say) while its branch is recorded.
    await rm(wt.path, { recursive: true, force: true });
    expect(await first.reserveWorktree(ISSUE)).toBe(true);

    // Killed here. The next runner on the work dir knows nothing of the reservation but its marker.
    const second = workspace();
    expect(await fill(second)).toEqual({ ...wt, from: "local_branch" });
    expect(await inWorktree(wt.path, ["rev-parse", "HEAD"])).toBe(collected.sha);
    expect(await readFile(join(wt.path, "work.txt"), "utf8")).toBe("agent\n");
  });
});

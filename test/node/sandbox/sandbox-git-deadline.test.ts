import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { GitError, git } from "../../../runner/git/exec.ts";
import { Workspace } from "../../../runner/git/workspace.ts";
import { sandboxGit } from "../../../runner/sandbox/sandbox-git.ts";
import { Sandbox } from "../../../runner/sandbox/session-sandbox.ts";
import { tempDir, Upstream } from "../git/support.ts";
import { running } from "../runner/support/processes.ts";

const ISSUE = { repoKey: "acme/widgets", issueNumber: 7 };

let root = "";

beforeEach(async () => {
  root = await tempDir("sandbox-git-deadline");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

it("a filter the agent planted that never ends: the runner's git gives up at the deadline, killing it", async () => {
  const upstream = await Upstream.create(root);
  const sandbox = new Sandbox({ mode: "bubblewrap", model: {}, secretFiles: [] });
  const ws = new Workspace({
    workDir: join(root, "work"),
    worktreeGit: sandboxGit(sandbox, { timeoutMs: 1_500 }),
  });
  await ws.ensureMirror({ ...ISSUE, remoteUrl: upstream.path });
  const wt = await ws.ensureWorktree({ ...ISSUE, baseBranch: "main" });
  await git(["config", "filter.stall.clean", "sleep 31.5"], { cwd: wt.path });
  await writeFile(join(wt.path, ".gitattributes"), "*.txt filter=stall\n");
  await writeFile(join(wt.path, "left.txt"), "left uncommitted\n");

  const error = await ws.collect(ISSUE, "Conveyor: uncommitted work").catch((e: unknown) => e);
  expect(error).toBeInstanceOf(GitError);
  expect((error as GitError).message).toContain("timed out after 1500 ms");
  expect(running("sleep 31.5")).toBe(false);
}, 20_000);

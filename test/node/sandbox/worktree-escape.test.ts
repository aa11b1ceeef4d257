import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { git } from "../../../runner/git/exec.ts";
import { Workspace } from "../../../runner/git/workspace.ts";
import { sandboxGit } from "../../../runner/sandbox/sandbox-git.ts";
import { Sandbox } from "../../../runner/sandbox/session-sandbox.ts";
import { tempDir, Upstream } from "../git/support.ts";

const ISSUE = { repoKey: "acme/widgets", issueNumber: 7 };

let root = "";
let ws: Workspace;
/** Another project's private repository on the same runner: its branch is work the agent must not reach. */
let other = "";
let secretSha = "";

beforeEach(async () => {
  root = await tempDir("escape");
  const upstream = await Upstream.create(root);
  const sandbox = new Sandbox({ mode: "bubblewrap", model: {}, secretFiles: [] });
  ws = new Workspace({ workDir: join(root, "work"), worktreeGit: sandboxGit(sandbox) });
  await ws.ensureMirror({ ...ISSUE, remoteUrl: upstream.path });
  const theirs = await Upstream.create(root, "theirs");
  secretSha = await theirs.commit({ "secret.txt": "another project's unpublished work\n" }, "secret");
  other = ws.mirrorPath("other/project");
  await mkdir(join(root, "work", "mirrors"), { recursive: true });
  await git(["clone", "--quiet", "--mirror", theirs.path, other]);
  await git(["-C", other, "update-ref", "refs/heads/conveyor/7", secretSha]);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** True when the private repository of this project holds the other project's commit. */
async function leaked(): Promise<boolean> {
  return git(["cat-file", "-e", `${secretSha}^{commit}`], { cwd: ws.mirrorPath(ISSUE.repoKey) }).then(
    () => true,
    () => false,
  );
}

/**
 * What a session can leave in its worktree's repository that resolves inside its sandbox (where the other
 * project's files do not exist) and differently on the host, where the runner takes the branch from.
 */
const PLANTS: [string, (gitDir: string) => Promise<void>][] = [
  [
    "a branch that is a symlink to the other repository's, with its objects borrowed",
    async (gitDir) => {
      await writeFile(
        join(gitDir, "HEAD"),
        `${(await readFile(join(gitDir, "refs/heads/conveyor/7"), "utf8")).trim()}\n`,
      );
      await rm(join(gitDir, "refs/heads/conveyor/7"));
      await symlink(join(other, "refs/heads/conveyor/7"), join(gitDir, "refs/heads/conveyor/7"));
      await writeFile(join(gitDir, "objects/info/alternates"), `${join(other, "objects")}\n`, { flag: "a" });
    },
  ],
  [
    "packed refs that are the other repository's",
    async (gitDir) => {
      await git(["-C", other, "pack-refs", "--all"]);
      await writeFile(
        join(gitDir, "HEAD"),
        `${(await readFile(join(gitDir, "refs/heads/conveyor/7"), "utf8")).trim()}\n`,
      );
      await rm(join(gitDir, "refs/heads/conveyor/7"));
      await symlink(join(other, "packed-refs"), join(gitDir, "packed-refs"));
      await symlink(join(other, "objects/pack"), join(gitDir, "objects/pack-theirs"));
      await writeFile(join(gitDir, "objects/info/alternates"), `${join(other, "objects")}\n`, { flag: "a" });
    },
  ],
];

describe("a worktree repository planted to lead the runner's git elsewhere", { timeout: 60_000 }, () => {
  it.each(PLANTS)("%s: the other project's work never reaches this project", async (_name, plant) => {
    const wt = await ws.ensureWorktree({ ...ISSUE, baseBranch: "main" });
    await plant(join(wt.path, ".git"));

    const collected = await ws.collect(ISSUE, "work").catch((error: unknown) => error);
    expect(await leaked()).toBe(false);
    expect(collected).toBeInstanceOf(Error);
  });
});

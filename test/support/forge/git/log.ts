import { git } from "./exec.ts";

export interface PushedCommit {
  sha: string;
  message: string;
  author: { name: string; email: string };
  committer: { name: string; email: string };
  timestamp: string;
  added: string[];
  removed: string[];
  modified: string[];
}

const RECORD = "\x1e";
const FIELD = "\x00";

/**
 * The commits a push brought to `branch`, newest first, at most `limit`: `before..after`, or for a new branch
 * the commits no other branch has.
 */
export async function pushedCommits(
  gitDir: string,
  branch: string,
  before: string | null,
  after: string,
  limit = 20,
): Promise<PushedCommit[]> {
  const range = before ? [`${before}..${after}`] : [after, "--not", `--exclude=${branch}`, "--branches"];
  // %x1e and %x00 print the separators (arguments cannot hold NUL).
  const format = "--format=%x1e%H%x00%an%x00%ae%x00%cn%x00%ce%x00%cI%x00%B%x00";
  const { stdout } = await git([
    "--git-dir",
    gitDir,
    "log",
    "--name-status",
    "--no-renames",
    `-n${limit}`,
    format,
    ...range,
  ]);
  return stdout
    .split(RECORD)
    .slice(1)
    .map((record) => {
      const [sha = "", an = "", ae = "", cn = "", ce = "", date = "", message = "", changes = ""] =
        record.split(FIELD);
      const files = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
      for (const line of changes.split("\n")) {
        const [kind, path] = line.split("\t");
        if (!path) continue;
        if (kind === "A") files.added.push(path);
        else if (kind === "D") files.removed.push(path);
        else files.modified.push(path);
      }
      return {
        sha,
        message,
        author: { name: an, email: ae },
        committer: { name: cn, email: ce },
        timestamp: date,
        ...files,
      };
    });
}

/** `git diff from to`, as Gitea serves `/pulls/{index}.diff`. */
export async function diff(gitDir: string, from: string, to: string, binary: boolean): Promise<string> {
  const args = ["--git-dir", gitDir, "diff", "-M", ...(binary ? ["--binary"] : []), from, to];
  return (await git(args)).stdout;
}

/** `git format-patch --stdout from..to`, as Gitea serves `/pulls/{index}.patch`. */
export async function formatPatch(gitDir: string, from: string, to: string): Promise<string> {
  return (await git(["--git-dir", gitDir, "format-patch", "--stdout", `${from}..${to}`])).stdout;
}

export async function hasFile(gitDir: string, commit: string, path: string): Promise<boolean> {
  const { code } = await git(["--git-dir", gitDir, "cat-file", "-e", `${commit}:${path}`], {
    ok: [0, 1, 128],
  });
  return code === 0;
}

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
  return logCommits(gitDir, range, limit);
}

/** The commit `sha`, with the files it changed. */
export async function commitAt(gitDir: string, sha: string): Promise<PushedCommit | undefined> {
  return (await logCommits(gitDir, [sha], 1))[0];
}

async function logCommits(gitDir: string, range: string[], limit: number): Promise<PushedCommit[]> {
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

/** One file of `git diff from to` as Gitea's `ChangedFile` counts it: binary files count no lines. */
export type DiffFile = {
  path: string;
  previousPath: string | null;
  /** git's status letter: A, D, M, T (type), R (rename), C (copy). */
  kind: string;
  additions: number;
  deletions: number;
};

/** `--name-status` and `--numstat` of the same diff, both NUL-separated, so any path reads as it is. */
export async function diffFiles(gitDir: string, from: string, to: string): Promise<DiffFile[]> {
  const args = (mode: string) => ["--git-dir", gitDir, "diff", "-M", "-z", mode, from, to];
  const names = (await git(args("--name-status"))).stdout.split("\0");
  const counts = (await git(args("--numstat"))).stdout.split("\0");
  const files: DiffFile[] = [];
  let n = 0;
  let c = 0;
  while (n < names.length - 1) {
    const status = names[n++] ?? "";
    const kind = status.charAt(0);
    const moved = kind === "R" || kind === "C";
    const first = names[n++] ?? "";
    const path = moved ? (names[n++] ?? "") : first;
    // numstat -z: "add\tdel\tpath\0", or for a move "add\tdel\t\0old\0new\0"; binary counts are "-".
    const [added = "-", deleted = "-"] = (counts[c++] ?? "").split("\t");
    if (moved) c += 2;
    files.push({
      path,
      previousPath: moved ? first : null,
      kind,
      additions: Number(added) || 0,
      deletions: Number(deleted) || 0,
    });
  }
  return files;
}

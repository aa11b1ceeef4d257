/**
 * A session's new commits, as collected into the private repository, with no closing keyword in their
 * messages (src/forge/post/commit-message.ts): "Fixes #2" would close issue 2 when Conveyor's pull request
 * merges. Only commits the remote does not have yet are read, and only those whose message (or parent)
 * changes are written again: the same bytes but the message, so the same commits come out the same on
 * every collection, and a worktree that still holds the originals pushes as a fast-forward.
 */
import { withoutClosingKeywords } from "../../src/forge/post/commit-message.ts";
import { git } from "./exec.ts";
import { NO_HOOKS, run } from "./repository.ts";

/** The head with its new commits' messages cleaned: `head` itself when none needed it. */
export async function cleanCommitMessages(mirror: string, head: string): Promise<string> {
  const listed = await run(mirror, ["rev-list", "--reverse", "--topo-order", head, "--not", "--remotes"]);
  const commits = listed.split("\n").filter(Boolean);
  const written = new Map<string, string>();
  for (const sha of commits) {
    const raw = await run(mirror, ["cat-file", "commit", sha]);
    const rewritten = rewrite(raw, written);
    if (rewritten === raw) continue;
    const args = [...NO_HOOKS, "hash-object", "-t", "commit", "-w", "--stdin"];
    written.set(sha, (await git(args, { cwd: mirror, input: rewritten })).trim());
  }
  return written.get(head) ?? head;
}

/** The raw commit with its parents mapped and its message cleaned; a signature no longer holds, and goes. */
function rewrite(raw: string, written: ReadonlyMap<string, string>): string {
  const split = raw.indexOf("\n\n");
  const headers = split < 0 ? raw : raw.slice(0, split);
  const message = split < 0 ? "" : raw.slice(split + 2);
  const cleaned = withoutClosingKeywords(message);
  const lines = headers.split("\n").map((line) => {
    const parent = /^parent ([0-9a-f]+)$/.exec(line)?.[1];
    return parent ? `parent ${written.get(parent) ?? parent}` : line;
  });
  const sameParents = lines.join("\n") === headers;
  if (sameParents && cleaned === message) return raw;
  // A signature header runs on in lines that start with a space.
  const kept: string[] = [];
  let signature = false;
  for (const line of lines) {
    if (/^(gpgsig|gpgsig-sha256) /.test(line)) signature = true;
    else if (!(signature && line.startsWith(" "))) {
      signature = false;
      kept.push(line);
    }
  }
  return `${kept.join("\n")}\n\n${cleaned}`;
}

import { gitDir } from "../forge.ts";
import { git } from "../git/exec.ts";
import { ApiError, json, type Reply } from "../http.ts";
import type { RepoContext } from "./context.ts";

/** Gitea's entry types by git mode: a link and a submodule are not files. */
const TYPES: Record<string, string> = { "040000": "dir", "120000": "symlink", "160000": "submodule" };

/**
 * `GET /contents/{path}?ref=` (and `/contents`, the root), as Gitea and GitHub share it: a directory is the list
 * of its entries (name, path, type, sha: the git object id), a file its base64 content and blob id. `ref`
 * defaults to the default branch.
 */
export async function getContents(ctx: RepoContext): Promise<Reply> {
  const dir = gitDir(ctx.forge.reposDir, ctx.repo);
  const ref = ctx.query.get("ref") || ctx.repo.defaultBranch;
  const path = (ctx.params.path ?? "").replace(/\/+$/, "");
  const object = `${ref}:${path}`;
  const type = await git(["--git-dir", dir, "cat-file", "-t", object], { ok: [0, 128] });
  if (type.code !== 0)
    throw new ApiError(404, `GetContentsOrList: object does not exist [id: , rel_path: ${path}]`);
  if (type.stdout.trim() === "blob") {
    const blob = await git(["--git-dir", dir, "cat-file", "blob", object]);
    const sha = (await git(["--git-dir", dir, "rev-parse", object])).stdout.trim();
    const content = Buffer.from(blob.stdout, "utf8").toString("base64");
    return json(200, { name: path.split("/").at(-1), path, sha, type: "file", encoding: "base64", content });
  }
  const tree = await git(["--git-dir", dir, "ls-tree", object]);
  const entries = tree.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [meta = "", name = ""] = line.split("\t");
      const [mode = "", , sha] = meta.split(" ");
      return { name, path: path ? `${path}/${name}` : name, sha, type: TYPES[mode] ?? "file" };
    });
  return json(200, entries);
}

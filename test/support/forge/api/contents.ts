import { gitDir } from "../forge.ts";
import { git } from "../git/exec.ts";
import { ApiError, json, type Reply } from "../http.ts";
import type { RepoContext } from "./context.ts";

/**
 * `GET /contents/{path}?ref=`, as Gitea and GitHub share it: a directory is the list of its entries (name,
 * path, type), a file its base64 content. `ref` defaults to the default branch.
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
    const content = Buffer.from(blob.stdout, "utf8").toString("base64");
    return json(200, { name: path.split("/").at(-1), path, type: "file", encoding: "base64", content });
  }
  const tree = await git(["--git-dir", dir, "ls-tree", object]);
  const entries = tree.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [meta = "", name = ""] = line.split("\t");
      const kind = meta.split(" ")[1];
      return { name, path: `${path}/${name}`, type: kind === "tree" ? "dir" : "file" };
    });
  return json(200, entries);
}

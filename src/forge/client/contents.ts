/**
 * Reading a repository's files at a ref, the same on both forges (`GET …/contents/{path}?ref=`): a directory's
 * files, and the git object ids of some (what an approval binds).
 */
import { z } from "zod";
import { hasStatus } from "./errors.ts";
import type { ForgeHttp } from "./http.ts";

/** Each entry with its git object id (`sha`); GitHub lists a submodule as a `file`, its sha a commit. */
const directoryEntries = z.array(z.object({ path: z.string(), type: z.string(), sha: z.string() }));
const directoryOrFile = z.union([directoryEntries, z.object({ type: z.string() })]);
const fileContent = z.object({ content: z.string(), encoding: z.literal("base64") });

/** The files of `dir` at `ref`, path → text; past `maxFiles` (in path order) only named, their text empty. */
export async function readDirectory(
  http: ForgeHttp,
  repo: string,
  dir: string,
  ref: string,
  maxFiles: number,
): Promise<Map<string, string>> {
  const entries = await listing(http, repo, dir, ref);
  const files = entries
    .filter((entry) => entry.type === "file")
    .map((entry) => entry.path)
    .sort();
  const read = files.slice(0, maxFiles).map(async (path) => {
    const request = { method: "GET", path: contentsPath(repo, path), query: { ref } } as const;
    const file = await http.json(request, fileContent);
    return [path, decodeBase64(file.content)] as const;
  });
  return new Map([...(await Promise.all(read)), ...files.slice(maxFiles).map((path) => [path, ""] as const)]);
}

/** The git object id of each of `paths` at `ref` that is a file there. */
export async function fileIds(
  http: ForgeHttp,
  repo: string,
  paths: readonly string[],
  ref: string,
): Promise<Map<string, string>> {
  const dirOf = (path: string) => path.split("/").slice(0, -1).join("/");
  const wanted = new Set(paths);
  const dirs = [...new Set(paths.map(dirOf))];
  const listings = await Promise.all(dirs.map((dir) => listing(http, repo, dir, ref)));
  return new Map(
    listings
      .flat()
      .filter((entry) => entry.type === "file" && wanted.has(entry.path))
      .map((entry) => [entry.path, entry.sha] as const),
  );
}

/** A directory's entries at `ref`; none when it is missing, or a file. */
async function listing(http: ForgeHttp, repo: string, dir: string, ref: string) {
  try {
    const found = await http.json(
      { method: "GET", path: contentsPath(repo, dir), query: { ref } },
      directoryOrFile,
    );
    return Array.isArray(found) ? found : [];
  } catch (error) {
    if (hasStatus(error, 404)) return [];
    throw error;
  }
}

function contentsPath(repo: string, path: string): string {
  const parts = path.replace(/\/+$/, "").split("/").filter(Boolean).map(encodeURIComponent);
  return [`${repo}/contents`, ...parts].join("/");
}

function decodeBase64(text: string): string {
  const binary = atob(text.replace(/\s/g, ""));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

import type { Reply } from "../http.ts";
import type { ApiContext, RepoContext } from "./context.ts";

type Handler<C> = (ctx: C) => Reply | Promise<Reply>;

export type Route =
  | { method: string; pattern: RegExp; names: string[]; scope: "user"; handle: Handler<ApiContext> }
  | { method: string; pattern: RegExp; names: string[]; scope: "repo"; handle: Handler<RepoContext> };

// `{index}` and `{id}` are numbers, `{diffType}` is diff or patch, `{branch}` the rest of the path (branch names
// have slashes) and so are `{path}` (a file's path) and `{basehead}` (two refs), any other parameter is one
// path segment.
const PARAMETER: Record<string, string> = {
  path: "(.+)",
  index: "(\\d+)",
  id: "(\\d+)",
  diffType: "(diff|patch)",
  branch: "(.+)",
  basehead: "(.+)",
};

function compile(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path.replace(/\{(\w+)\}|[.*+?^$()|[\]\\]/g, (token, name: string | undefined) => {
    if (name === undefined) return `\\${token}`;
    names.push(name);
    return PARAMETER[name] ?? "([^/]+)";
  });
  return { pattern: new RegExp(`^${source}$`), names };
}

export function userRoute(method: string, path: string, handle: Handler<ApiContext>): Route {
  return { method, ...compile(path), scope: "user", handle };
}

/** A route below `/repos/{owner}/{repo}`. */
export function repoRoute(method: string, path: string, handle: Handler<RepoContext>): Route {
  return { method, ...compile(`/repos/{owner}/{repo}${path}`), scope: "repo", handle };
}

export type RouteMatch = { route: Route; params: Record<string, string> };

/** The route for `path` (still percent-encoded); "method" when only other methods have one. */
export function findRoute(routes: Route[], method: string, path: string): RouteMatch | "method" | null {
  let pathMatched = false;
  for (const route of routes) {
    const match = route.pattern.exec(path);
    if (!match) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    const params = Object.fromEntries(
      route.names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? "")]),
    );
    return { route, params };
  }
  return pathMatched ? "method" : null;
}

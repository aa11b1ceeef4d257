import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiContext } from "./api/context.ts";
import { findRoute } from "./api/router.ts";
import { ROUTES } from "./api/routes.ts";
import { accessMode, atLeast, authenticate } from "./auth.ts";
import { type Forge, gitDir } from "./forge.ts";
import { serveHttpBackend } from "./git/http-backend.ts";
import { branchHeads, branchUpdates } from "./git/refs.ts";
import { ApiError, errorReply, notFound, readBody, send } from "./http.ts";
import { applyBranchUpdates } from "./push.ts";
import { fullName } from "./store.ts";
import { servePage } from "./web.ts";

const API_PREFIX = "/api/v1";
const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const CI_LOG_PATH = /^\/ci\/logs\/(\d+)$/;

/**
 * Every request: the API below /api/v1, git smart HTTP below /<owner>/<repo>(.git), CI logs below /ci/logs, and
 * the web pages of repositories, issues, pull requests, commits and branches (web.ts).
 */
export async function handleRequest(forge: Forge, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", forge.render.url);
  try {
    if (url.pathname.startsWith(`${API_PREFIX}/`)) return await handleApi(forge, req, res, url);
    const git = GIT_PATH.exec(url.pathname);
    if (git) return await handleGit(forge, req, res, url, git);
    const log = CI_LOG_PATH.exec(url.pathname);
    if (log && req.method === "GET") return await serveCiLog(forge, res, Number(log[1]));
    if (await servePage(forge, req, res, url)) return;
    send(res, { status: 404, text: "Not found\n" });
  } catch (error) {
    if (error instanceof ApiError) return send(res, errorReply(error, swaggerUrl(forge)));
    reportError(error);
    if (res.headersSent) res.destroy();
    else send(res, errorReply(new ApiError(500, String(error)), swaggerUrl(forge)));
  }
}

function reportError(error: unknown): void {
  console.error("local forge:", error);
}

function swaggerUrl(forge: Forge): string {
  return `${forge.render.url}/api/swagger`;
}

async function handleApi(forge: Forge, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const method = req.method ?? "GET";
  const found = findRoute(ROUTES, method, url.pathname.slice(API_PREFIX.length));
  if (found === "method") throw new ApiError(405, "Method Not Allowed");
  if (found === null) throw notFound();
  const credentials = authenticate(forge.store, req.headers.authorization);
  // Like a Forgejo with REQUIRE_SIGNIN_VIEW: nothing is served anonymously.
  if (credentials.kind !== "user") {
    throw new ApiError(
      401,
      credentials.kind === "invalid" ? "invalid username, password or token" : "token is required",
    );
  }
  const raw = (await readBody(req)).toString("utf8");
  let body: unknown;
  try {
    body = raw.trim() === "" ? undefined : JSON.parse(raw);
  } catch {
    throw new ApiError(422, "[body]: invalid JSON");
  }
  const ctx: ApiContext = {
    forge,
    doer: credentials.user,
    params: found.params,
    query: url.searchParams,
    body,
    url,
    dialect: req.headers["x-github-api-version"] ? "github" : "gitea",
  };
  const { route } = found;
  let reply: Awaited<ReturnType<typeof route.handle>>;
  if (route.scope === "repo") {
    const repo = forge.store.repo(found.params.owner ?? "", found.params.repo ?? "");
    const mode = repo ? accessMode(ctx.doer, repo) : "none";
    // Private repositories the doer cannot see do not exist for them.
    if (!repo || mode === "none") throw notFound();
    if (method === "GET") {
      const below = url.pathname.slice(
        `${API_PREFIX}/repos/${found.params.owner}/${found.params.repo}`.length,
      );
      const failed = forge.readFaults.reply(fullName(repo), below, swaggerUrl(forge));
      if (failed) return send(res, failed);
    } else {
      const refused = forge.writes.refusal(fullName(repo));
      const write = { method, path: url.pathname, at: Date.now(), refused: refused !== null };
      forge.writes.record(fullName(repo), write);
      if (refused) return send(res, refused);
    }
    reply = await route.handle({ ...ctx, repo, mode });
  } else {
    reply = await route.handle(ctx);
  }
  if (method !== "GET") forge.store.save();
  const repoName = route.scope === "repo" ? `${found.params.owner}/${found.params.repo}` : undefined;
  send(
    res,
    forge.budget.answer(reply, {
      method,
      ifNoneMatch: req.headers["if-none-match"],
      user: ctx.doer.login,
      repo: repoName,
    }),
  );
}

/**
 * `git http-backend` behind Basic auth (a token as password): reading needs read access, pushing write
 * access. A push runs under the repository's lock, and the forge applies the branch updates it made
 * (webhooks, pull request syncs, CI) before the response ends.
 */
async function handleGit(
  forge: Forge,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  [, owner = "", name = "", service = ""]: RegExpExecArray,
): Promise<void> {
  const credentials = authenticate(forge.store, req.headers.authorization);
  if (credentials.kind !== "user") {
    res.writeHead(401, { "WWW-Authenticate": 'Basic realm="Gitea"', "Content-Type": "text/plain" });
    res.end("Unauthorized\n");
    return;
  }
  const user = credentials.user;
  const repo = forge.store.repo(decodeURIComponent(owner), decodeURIComponent(name));
  const mode = repo ? accessMode(user, repo) : "none";
  if (!repo || mode === "none") return send(res, { status: 404, text: "Repository not found\n" });
  const push = service === "git-receive-pack" || url.searchParams.get("service") === "git-receive-pack";
  if (push && !atLeast(mode, "write"))
    return send(res, { status: 403, text: "User permission denied for writing.\n" });

  const dir = gitDir(forge.reposDir, repo);
  const cgi = {
    projectRoot: forge.reposDir,
    pathInfo: `/${repo.owner.toLowerCase()}/${repo.name.toLowerCase()}.git/${service}`,
    query: url.search.slice(1),
    user: user.login,
  };
  if (service !== "git-receive-pack") return serveHttpBackend(req, res, cgi, async () => {});
  await forge.locks.run(fullName(repo), async () => {
    const before = await branchHeads(dir);
    await serveHttpBackend(req, res, cgi, async () => {
      const updates = branchUpdates(before, await branchHeads(dir));
      // The push itself succeeded; a failure afterwards is the forge's bug, not the pusher's.
      if (updates.length > 0) await applyBranchUpdates(forge, repo, user, updates).catch(reportError);
    });
  });
}

async function serveCiLog(forge: Forge, res: ServerResponse, id: number): Promise<void> {
  if (!forge.store.state.ciRuns.some((run) => run.id === id))
    return send(res, { status: 404, text: "No such run\n" });
  const text = await readFile(forge.ci.logFile(id), "utf8").catch(() => "");
  send(res, { status: 200, text });
}

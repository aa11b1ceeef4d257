/**
 * The forge's web pages, at Gitea's paths, for the links Conveyor, its dashboard and the demo print: the
 * repositories, a repository, an issue, a pull request (its checks, reviews, comments and diff), a commit and
 * a branch. Plain
 * HTML, nothing to run. Unlike the API, a public repository's pages need no token (a browser sends none); a
 * private one's need Basic auth with a token, as git does, and are a 404 to anyone who may not read it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { accessMode, authenticate } from "./auth.ts";
import { type Forge, gitDir } from "./forge.ts";
import { git } from "./git/exec.ts";
import { diff } from "./git/log.ts";
import { send } from "./http.ts";
import type { Issue, Repo } from "./state.ts";

const PAGE = /^\/([^/]+)\/([^/]+?)(?:\/(issues|pulls|commit|src\/branch)\/(.+?))?\/?$/;

/** Text for HTML: interpolated values are escaped, `Html` fragments (other templates) are not. */
class Html {
  readonly text: string;

  // A field, not a parameter property: Node runs this file by stripping types (the demo, the forge's CLI).
  constructor(text: string) {
    this.text = text;
  }
}
type Part = string | number | Html | Html[] | null | undefined | false;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  const text = (part: Part): string =>
    part instanceof Html
      ? part.text
      : Array.isArray(part)
        ? part.map(text).join("")
        : part === null || part === undefined || part === false
          ? ""
          : escapeHtml(String(part));
  return new Html(strings.reduce((out, s, i) => out + s + (i < parts.length ? text(parts[i]) : ""), ""));
}

const STYLE =
  "body{font:15px/1.5 system-ui,sans-serif;max-width:62rem;margin:1.5rem auto;padding:0 1rem;color:#222}" +
  "pre{white-space:pre-wrap;background:#f6f8fa;padding:.6rem;border-radius:4px;overflow-x:auto}" +
  ".meta{color:#666}.state{font-weight:600}.box{border:1px solid #ddd;border-radius:4px;padding:.2rem .8rem;margin:.6rem 0}" +
  "table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:left;border-bottom:1px solid #eee}";

const HTML = { "Content-Type": "text/html;charset=utf-8" };

function layout(title: string, breadcrumb: Html, body: Html): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title><style>${new Html(STYLE)}</style></head>
<body><p class="meta">${breadcrumb}<a href="/">local forge</a></p>
${body}</body></html>
`.text;
}

function page(repo: Repo, title: string, body: Html): string {
  const name = `${repo.owner}/${repo.name}`;
  return layout(`${title} · ${name}`, html`<a href="/${name}">${name}</a> · `, body);
}

function indexPage(repos: Repo[]): string {
  const item = (r: Repo) =>
    html`<li><a href="/${r.owner}/${r.name}">${r.owner}/${r.name}</a> ${r.description}</li>`;
  return layout("local forge", html``, html`<h1>Repositories</h1><ul>${repos.map(item)}</ul>`);
}

/**
 * Serves the page `url` names, if it is one: false leaves the request to others (git, CI logs, a 404).
 * Anything but GET and HEAD is not a page.
 */
export async function servePage(
  forge: Forge,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  const credentials = authenticate(forge.store, req.headers.authorization);
  const readable = (repo: Repo) =>
    credentials.kind === "user" ? accessMode(credentials.user, repo) !== "none" : !repo.private;
  if (url.pathname === "/") {
    send(res, { status: 200, text: indexPage(forge.store.state.repos.filter(readable)), headers: HTML });
    return true;
  }
  const match = PAGE.exec(url.pathname);
  if (!match) return false;
  const [, owner = "", name = "", kind, rest = ""] = match.map((part) => part && decodeURIComponent(part));
  const repo = forge.store.repo(owner, name);
  const reply = repo && readable(repo) ? await render(forge, repo, kind, rest) : null;
  if (reply === null) send(res, { status: 404, text: "Not found\n" });
  else if ("location" in reply) send(res, { status: 303, headers: { Location: reply.location } });
  else send(res, { status: 200, text: reply.html, headers: HTML });
  return true;
}

type Rendered = { html: string } | { location: string } | null;

async function render(forge: Forge, repo: Repo, kind: string | undefined, rest: string): Promise<Rendered> {
  const home = `/${repo.owner}/${repo.name}`;
  if (kind === undefined) return { html: repoPage(repo) };
  if (kind === "commit") return commitPage(forge, repo, rest);
  if (kind === "src/branch") return branchPage(forge, repo, rest);
  const issue = /^\d+$/.test(rest) ? forge.store.issue(repo, Number(rest)) : undefined;
  if (!issue) return null;
  // Gitea sends an issue's number under /pulls, and a pull request's under /issues, where it belongs.
  const wanted = issue.pull ? "pulls" : "issues";
  if (kind !== wanted) return { location: `${home}/${wanted}/${issue.index}` };
  return { html: issue.pull ? await pullPage(forge, repo, issue) : issuePage(forge, repo, issue) };
}

function repoPage(repo: Repo): string {
  const home = `/${repo.owner}/${repo.name}`;
  const open = repo.issues.filter((i) => i.state === "open");
  const item = (i: Issue) =>
    html`<li><a href="${home}/${i.pull ? "pulls" : "issues"}/${i.index}">#${i.index} ${i.title}</a></li>`;
  return page(
    repo,
    repo.name,
    html`<h1>${repo.owner}/${repo.name}</h1><p>${repo.description}</p>
<p>Default branch <a href="${home}/src/branch/${repo.defaultBranch}">${repo.defaultBranch}</a></p>
<h2>Open issues</h2><ul>${open.filter((i) => !i.pull).map(item)}</ul>
<h2>Open pull requests</h2><ul>${open.filter((i) => i.pull).map(item)}</ul>`,
  );
}

/** The issue's or pull request's head: title, state, who opened it, labels and description. */
function head(forge: Forge, repo: Repo, issue: Issue, state: string): Html {
  const labels = issue.labelIds.map((id) => repo.labels.find((l) => l.id === id)?.name ?? `label ${id}`);
  return html`<h1>${issue.title} <span class="meta">#${issue.index}</span></h1>
<p><span class="state">${state}</span> · opened by ${forge.store.user(issue.posterId).login} at ${issue.createdAt}${
    labels.length > 0 && html` · labels: ${labels.join(", ")}`
  }</p>
<pre>${issue.body || "(no description)"}</pre>`;
}

function comments(forge: Forge, issue: Issue): Html {
  return html`<h2>Comments</h2>${
    issue.comments.length === 0
      ? html`<p class="meta">None.</p>`
      : issue.comments.map(
          (c) =>
            html`<div class="box"><p class="meta">${forge.store.user(c.posterId).login} at ${c.createdAt}</p><pre>${c.body}</pre></div>`,
        )
  }`;
}

function issuePage(forge: Forge, repo: Repo, issue: Issue): string {
  const state = issue.state === "closed" ? `closed at ${issue.closedAt}` : "open";
  return page(repo, issue.title, html`${head(forge, repo, issue, state)}${comments(forge, issue)}`);
}

async function pullPage(forge: Forge, repo: Repo, issue: Issue): Promise<string> {
  const pull = issue.pull;
  if (!pull) throw new Error(`#${issue.index} is not a pull request`);
  const home = `/${repo.owner}/${repo.name}`;
  const state = pull.merged
    ? `merged at ${pull.mergedAt}`
    : issue.state === "closed"
      ? "closed"
      : pull.mergeable
        ? "open"
        : "open, in conflict with its base";
  const checks = repo.statuses.filter((s) => s.sha === pull.headSha);
  const reviews = pull.reviews.map(
    (r) =>
      html`<div class="box"><p class="meta">${forge.store.user(r.reviewerId).login}: <span class="state">${r.state}</span> at ${r.submittedAt} on ${r.commitId.slice(0, 10)}</p>${
        r.body && html`<pre>${r.body}</pre>`
      }</div>`,
  );
  const changes = await diff(gitDir(forge.reposDir, repo), pull.mergeBase, pull.headSha, false);
  return page(
    repo,
    issue.title,
    html`${head(forge, repo, issue, state)}
<p><a href="${home}/src/branch/${pull.headBranch}">${pull.headBranch}</a> into
<a href="${home}/src/branch/${pull.baseBranch}">${pull.baseBranch}</a>, head
<a href="${home}/commit/${pull.headSha}">${pull.headSha.slice(0, 10)}</a></p>
<h2>Checks</h2>${
      checks.length === 0
        ? html`<p class="meta">None.</p>`
        : html`<table>${checks.map(
            (s) =>
              html`<tr><td>${s.context}</td><td class="state">${s.state}</td><td>${s.description}</td><td>${
                s.targetUrl && html`<a href="${s.targetUrl}">details</a>`
              }</td></tr>`,
          )}</table>`
    }
<h2>Reviews</h2>${reviews.length === 0 ? html`<p class="meta">None.</p>` : reviews}
${comments(forge, issue)}
<h2>Changes</h2><pre>${changes || "(none)"}</pre>`,
  );
}

async function commitPage(forge: Forge, repo: Repo, sha: string): Promise<Rendered> {
  if (!/^[0-9a-f]{4,40}$/.test(sha)) return null;
  const dir = gitDir(forge.reposDir, repo);
  const shown = await git(
    [
      "--git-dir",
      dir,
      "show",
      "--format=%H%n%an <%ae>%n%aI%n%n%B",
      "--stat",
      "--patch",
      `${sha}^{commit}`,
      "--",
    ],
    {
      ok: [0, 128],
    },
  );
  if (shown.code !== 0) return null;
  const [full = sha, author = "", date = "", , ...rest] = shown.stdout.split("\n");
  return {
    html: page(
      repo,
      `commit ${full.slice(0, 10)}`,
      html`<h1>Commit <code>${full}</code></h1><p class="meta">${author} at ${date}</p><pre>${rest.join("\n")}</pre>`,
    ),
  };
}

async function branchPage(forge: Forge, repo: Repo, branch: string): Promise<Rendered> {
  const sha = repo.branches[branch];
  if (!sha) return null;
  const home = `/${repo.owner}/${repo.name}`;
  const tree = await git(["--git-dir", gitDir(forge.reposDir, repo), "ls-tree", "-r", "--name-only", sha]);
  return {
    html: page(
      repo,
      branch,
      html`<h1>Branch ${branch}</h1><p>At <a href="${home}/commit/${sha}">${sha.slice(0, 10)}</a></p>
<h2>Files</h2><pre>${tree.stdout}</pre>`,
    ),
  };
}

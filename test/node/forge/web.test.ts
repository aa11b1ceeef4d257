/**
 * The local forge's web pages: the links the dashboard gives (src/forge/web-links.ts) open an issue, a pull
 * request (with its check, review and diff), a commit and a branch; a private repository's are a 404 to a
 * browser without a token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgeLinks } from "../../../src/forge/web-links.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { Checkout, clientFor, startForge } from "./harness.ts";

let forge: LocalForge;
let cleanup: () => Promise<void>;
let workDir = "";
let token = "";
let head = "";
let issue = 0;
let pull = 0;

beforeAll(async () => {
  ({ forge, cleanup, workDir } = await startForge({ ci: { enabled: false } }));
  await forge.createRepo({ owner: "acme", name: "web", seed: { files: { "README.md": "# web\n" } } });
  await forge.createRepo({
    owner: "acme",
    name: "secret",
    private: true,
    seed: { files: { "a.txt": "a\n" } },
  });
  token = forge.createUser("dev").token;
  forge.addCollaborator("acme/web", "dev", "write");
  const client = clientFor(forge, token, "acme/web");
  issue = (await client.createIssue({ title: "Add <b>slugify</b>", body: "With tests & docs.", labels: [] }))
    .number;
  await client.comment(issue, "I will take it.");
  const checkout = await Checkout.clone(forge.cloneUrl("acme/web", token), `${workDir}/web`);
  head = await checkout.commitAndPush("conveyor/1", {
    "src/slugify.js": "export const slugify = (t) => t;\n",
  });
  pull = (
    await client.createPullRequest({
      head: "conveyor/1",
      base: "main",
      title: "Add slugify",
      body: "Closes #1",
    })
  ).number;
  // As a CI reports its result (Gitea's POST /repos/{owner}/{repo}/statuses/{sha}).
  await fetch(`${forge.apiUrl}/repos/acme/web/statuses/${head}`, {
    method: "POST",
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      state: "success",
      context: "ci/test",
      description: "all green",
      target_url: `${forge.url}/ci/logs/1`,
    }),
  });
}, 60_000);

afterAll(() => cleanup?.());

const open = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers, redirect: "manual" });
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    location: res.headers.get("location"),
    text: await res.text(),
  };
};

describe("the forge's pages, at the dashboard's links", () => {
  const links = () => forgeLinks({ forge: "forgejo", apiUrl: forge.apiUrl, repo: "acme/web" });

  it("an issue: title (escaped), state, description and comments", async () => {
    const page = await open(links().issue(issue));
    expect(page).toMatchObject({ status: 200, type: "text/html;charset=utf-8" });
    expect(page.text).toContain("<h1>Add &#60;b&#62;slugify&#60;/b&#62; <span");
    expect(page.text).toContain("With tests &#38; docs.");
    expect(page.text).toContain("I will take it.");
  });

  it("a pull request: its branches, head, check with its log, and diff", async () => {
    const page = await open(links().pullRequest(pull));
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="/acme/web/commit/${head}"`);
    expect(page.text).toMatch(/<td>ci\/test<\/td><td class="state">success<\/td><td>all green<\/td>/);
    expect(page.text).toContain(`href="${forge.url}/ci/logs/1"`);
    expect(page.text).toContain("+export const slugify = (t) =&#62; t;");
  });

  it("a commit and a branch", async () => {
    const commit = await open(links().commit(head));
    expect(commit.status).toBe(200);
    expect(commit.text).toContain(`<code>${head}</code>`);
    expect(commit.text).toContain("src/slugify.js");
    const branch = await open(links().branch("conveyor/1") ?? "");
    expect(branch.status).toBe(200);
    expect(branch.text).toContain("README.md\nsrc/slugify.js");
  });

  it("an issue's number under /pulls (and the reverse) redirects to where it belongs; unknown ones are a 404", async () => {
    expect(await open(`${forge.url}/acme/web/pulls/${issue}`)).toMatchObject({
      status: 303,
      location: `/acme/web/issues/${issue}`,
    });
    expect((await open(`${forge.url}/acme/web/issues/99`)).status).toBe(404);
    expect((await open(`${forge.url}/acme/web/commit/${"0".repeat(40)}`)).status).toBe(404);
    expect((await open(`${forge.url}/acme/web/src/branch/nope`)).status).toBe(404);
  });

  it("a private repository's pages need a token", async () => {
    expect((await open(`${forge.url}/acme/secret`)).status).toBe(404);
    const index = await open(`${forge.url}/`);
    expect(index.text).toContain('href="/acme/web"');
    expect(index.text).not.toContain("acme/secret");
    const basic = `Basic ${Buffer.from(`${forge.admin.token}:`).toString("base64")}`;
    expect((await open(`${forge.url}/acme/secret`, { authorization: basic })).status).toBe(200);
  });
});

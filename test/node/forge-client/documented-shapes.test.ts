/**
 * Each forge answer is parsed with the shape its operation documents, and the local forge answers with
 * those shapes: checked against excerpts of GitHub's OpenAPI description and Gitea's Swagger
 * (test/fixtures/forge-api/, their sources named in SOURCES.md). A list's shape is not an item's: GitHub
 * lists pull requests without `merged` and `mergeable`, so a client reading its list with the item's schema
 * throws on real GitHub.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { createForgeClient } from "../../../src/forge/client/index.ts";
import {
  giteaBranchProtection,
  giteaMergeMethods,
  giteaProtection,
  githubBranchProtection,
  githubMergeMethods,
  githubProtection,
} from "../../../src/forge/client/merge-rules.ts";
import {
  changedFile,
  comment,
  commitParents,
  giteaBranch,
  giteaCombinedStatus,
  giteaReviewComment,
  githubBranch,
  githubCheckRuns,
  githubCheckSuites,
  githubCombinedStatus,
  githubComparison,
  githubReviewComment,
  issue,
  listedPullRequest,
  login,
  permission,
  pullMergeState,
  pullRequest,
  repoLabel,
  review,
  updatedIssue,
  withId,
  withNumber,
} from "../../../src/forge/client/schemas.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { Checkout, clientFor, startForge } from "../forge/harness.ts";
import { documented, misfits, requirementsOf, unmetNeeds } from "./documented.ts";

const list = <S extends z.ZodType>(schema: S) => ({ array: schema });
type Read = { schema: z.ZodType } | { array: z.ZodType };

/** What src/forge/client parses each documented answer with. */
const GITHUB_READS: Record<string, Read[]> = {
  "GET /user": [{ schema: login }],
  "GET /repos/{owner}/{repo}/issues": [list(updatedIssue), list(issue)],
  "POST /repos/{owner}/{repo}/issues": [{ schema: withNumber }],
  "GET /repos/{owner}/{repo}/issues/{issue_number}": [{ schema: issue }],
  "GET /repos/{owner}/{repo}/issues/{issue_number}/comments": [list(comment)],
  "POST /repos/{owner}/{repo}/issues/{issue_number}/comments": [{ schema: withId }],
  "GET /repos/{owner}/{repo}/labels": [list(repoLabel)],
  "POST /repos/{owner}/{repo}/labels": [{ schema: repoLabel }],
  "GET /repos/{owner}/{repo}/pulls": [list(listedPullRequest)],
  "POST /repos/{owner}/{repo}/pulls": [{ schema: pullRequest }],
  "GET /repos/{owner}/{repo}/pulls/{pull_number}": [{ schema: pullRequest }, { schema: pullMergeState }],
  "GET /repos/{owner}/{repo}/pulls/{pull_number}/files": [list(changedFile)],
  "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews": [list(review)],
  "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews": [{ schema: withId }],
  "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments": [list(githubReviewComment)],
  "GET /repos/{owner}/{repo}/collaborators/{username}/permission": [{ schema: permission }],
  "GET /repos/{owner}/{repo}/branches/{branch}": [
    { schema: githubBranch },
    { schema: githubBranchProtection },
  ],
  "GET /repos/{owner}/{repo}/commits/{ref}/status": [{ schema: githubCombinedStatus }],
  "GET /repos/{owner}/{repo}/commits/{ref}/check-runs": [{ schema: githubCheckRuns }],
  "GET /repos/{owner}/{repo}/commits/{ref}/check-suites": [{ schema: githubCheckSuites }],
  "GET /repos/{owner}/{repo}/commits/{ref}": [{ schema: commitParents }],
  "GET /repos/{owner}/{repo}/compare/{basehead}": [{ schema: githubComparison }],
  "POST /repos/{owner}/{repo}/hooks": [{ schema: withId }],
  "GET /repos/{owner}/{repo}": [{ schema: githubMergeMethods }],
  "GET /repos/{owner}/{repo}/branches/{branch}/protection": [{ schema: githubProtection }],
};

const GITEA_READS: Record<string, Read[]> = {
  "GET /user": [{ schema: login }],
  "GET /repos/{owner}/{repo}/issues": [list(updatedIssue), list(issue)],
  "POST /repos/{owner}/{repo}/issues": [{ schema: withNumber }],
  "GET /repos/{owner}/{repo}/issues/{index}": [{ schema: issue }],
  "GET /repos/{owner}/{repo}/issues/{index}/comments": [list(comment)],
  "POST /repos/{owner}/{repo}/issues/{index}/comments": [{ schema: withId }],
  "GET /repos/{owner}/{repo}/labels": [list(repoLabel)],
  "POST /repos/{owner}/{repo}/labels": [{ schema: repoLabel }],
  "GET /repos/{owner}/{repo}/pulls": [list(listedPullRequest)],
  "POST /repos/{owner}/{repo}/pulls": [{ schema: pullRequest }],
  "GET /repos/{owner}/{repo}/pulls/{index}": [{ schema: pullRequest }, { schema: pullMergeState }],
  "GET /repos/{owner}/{repo}/pulls/{index}/reviews": [list(review)],
  "POST /repos/{owner}/{repo}/pulls/{index}/reviews": [{ schema: withId }],
  "GET /repos/{owner}/{repo}/pulls/{index}/reviews/{id}/comments": [list(giteaReviewComment)],
  "GET /repos/{owner}/{repo}/collaborators/{collaborator}/permission": [{ schema: permission }],
  "GET /repos/{owner}/{repo}/branches/{branch}": [{ schema: giteaBranch }, { schema: giteaBranchProtection }],
  "GET /repos/{owner}/{repo}/commits/{ref}/status": [{ schema: giteaCombinedStatus }],
  "GET /repos/{owner}/{repo}/git/commits/{sha}": [{ schema: commitParents }],
  "GET /repos/{owner}/{repo}": [{ schema: giteaMergeMethods }],
  "GET /repos/{owner}/{repo}/branch_protections/{name}": [{ schema: giteaProtection }],
};

const requirements = (read: Read) =>
  "array" in read ? { type: "array", items: requirementsOf(read.array) } : requirementsOf(read.schema);

describe.each([
  ["github", GITHUB_READS],
  ["gitea", GITEA_READS],
] as const)("the %s client reads what each operation documents", (forge, reads) => {
  const doc = documented(forge);

  it("has a documented answer for every operation it parses, and the excerpt names nothing else", () => {
    expect(Object.keys(reads).sort()).toEqual(Object.keys(doc.operations).sort());
  });

  it.each(Object.entries(reads))("%s", (operation, parsedWith) => {
    const answer = doc.operations[operation]?.response;
    if (!answer) throw new Error(`no documented answer for ${operation}`);
    for (const read of parsedWith) expect(unmetNeeds(doc, requirements(read), answer).join("\n")).toBe("");
  });
});

// --- the local forge's answers ---------------------------------------------------------------------------

const REPO = "acme/shapes";
let forge: LocalForge;
let cleanup: () => Promise<void>;
let token: string;
const ids = { issue: 0, pull: 0, sha: "", review: 0 };

beforeAll(async () => {
  const started = await startForge({ ci: { enabled: false } });
  ({ forge, cleanup } = started);
  await forge.createRepo({ owner: "acme", name: "shapes", seed: { files: { "README.md": "# shapes\n" } } });
  ({ token } = forge.createUser("conveyor"));
  forge.addCollaborator(REPO, "conveyor", "admin");
  const client = clientFor(forge, token, REPO);
  await client.ensureLabels(["backlog"]);
  ids.issue = (await client.createIssue({ title: "An issue", body: "Text", labels: ["backlog"] })).number;
  await client.comment(ids.issue, "A comment");
  const rule = {
    rule_name: "main",
    required_approvals: 1,
    enable_status_check: true,
    status_check_contexts: ["ci/test"],
  };
  await fetch(`${forge.apiUrl}/repos/${REPO}/branch_protections`, {
    method: "POST",
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    body: JSON.stringify(rule),
  });
  const checkout = await Checkout.clone(forge.cloneUrl(REPO, forge.admin.token), `${started.workDir}/shapes`);
  ids.sha = await checkout.commitAndPush("conveyor/1", { "a.txt": "a\n" });
  ids.pull = (
    await client.createPullRequest({ head: "conveyor/1", base: "main", title: "A change", body: "" })
  ).number;
  const reviewer = forge.createUser("reviewer");
  forge.addCollaborator(REPO, "reviewer", "write");
  ids.review = (
    await clientFor(forge, reviewer.token, REPO).createReview(ids.pull, {
      event: "REQUEST_CHANGES",
      body: "Not yet.",
      comments: [{ path: "a.txt", line: 1, body: "Say more." }],
    })
  ).id;
});

afterAll(async () => {
  await cleanup();
});

async function answer(dialect: "github" | "gitea", path: string): Promise<unknown> {
  const headers: Record<string, string> = { authorization: `token ${token}` };
  if (dialect === "github") headers["X-GitHub-Api-Version"] = "2022-11-28";
  const res = await fetch(`${forge.apiUrl}${path}`, { headers });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

describe("a pull request found by listing", () => {
  it("GitHub's client finds the open pull request of a branch in the list's shorter shape", async () => {
    const github = createForgeClient({
      forge: "github",
      apiUrl: forge.apiUrl,
      repo: REPO,
      token,
      maxAttempts: 1,
    });
    // A second create for the same head is refused (GitHub: 422), and the open one is adopted from the list.
    await expect(
      github.createPullRequest({ head: "conveyor/1", base: "main", title: "Again", body: "" }),
    ).rejects.toMatchObject({ status: 422 });
    expect(await github.findOpenPullRequest("conveyor/1", "main")).toMatchObject({ number: ids.pull });
  });
});

describe("the local forge answers with the documented shapes", () => {
  const cases = (): [string, string][] => [
    ["GET /repos/{owner}/{repo}/issues", `/repos/${REPO}/issues?state=all`],
    ["GET /repos/{owner}/{repo}/labels", `/repos/${REPO}/labels`],
    ["GET /repos/{owner}/{repo}/pulls", `/repos/${REPO}/pulls`],
    ["GET /repos/{owner}/{repo}/commits/{ref}/status", `/repos/${REPO}/commits/${ids.sha}/status`],
  ];

  it("GitHub's, to GitHub's client: every required field, none it does not document", async () => {
    const doc = documented("github");
    const github: [string, string][] = [
      ...cases(),
      ["GET /repos/{owner}/{repo}/issues/{issue_number}", `/repos/${REPO}/issues/${ids.issue}`],
      [
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
        `/repos/${REPO}/issues/${ids.issue}/comments`,
      ],
      ["GET /repos/{owner}/{repo}/pulls/{pull_number}", `/repos/${REPO}/pulls/${ids.pull}`],
      ["GET /repos/{owner}/{repo}/commits/{ref}", `/repos/${REPO}/commits/${ids.sha}`],
      ["GET /repos/{owner}/{repo}/compare/{basehead}", `/repos/${REPO}/compare/main...${ids.sha}`],
      ["GET /repos/{owner}/{repo}/branches/{branch}/protection", `/repos/${REPO}/branches/main/protection`],
      ["GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews", `/repos/${REPO}/pulls/${ids.pull}/reviews`],
      [
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments",
        `/repos/${REPO}/pulls/${ids.pull}/reviews/${ids.review}/comments`,
      ],
    ];
    for (const [operation, path] of github) {
      const shape = doc.operations[operation]?.response;
      if (!shape) throw new Error(`no documented answer for ${operation}`);
      expect(misfits(doc, await answer("github", path), shape).join("\n"), operation).toBe("");
    }
  });

  it("Gitea's, to Gitea's client: every documented field, of its type", async () => {
    const doc = documented("gitea");
    const gitea: [string, string][] = [
      ...cases(),
      ["GET /repos/{owner}/{repo}/issues/{index}", `/repos/${REPO}/issues/${ids.issue}`],
      ["GET /repos/{owner}/{repo}/issues/{index}/comments", `/repos/${REPO}/issues/${ids.issue}/comments`],
      ["GET /repos/{owner}/{repo}/pulls/{index}", `/repos/${REPO}/pulls/${ids.pull}`],
      [
        "GET /repos/{owner}/{repo}/collaborators/{collaborator}/permission",
        `/repos/${REPO}/collaborators/conveyor/permission`,
      ],
      ["GET /repos/{owner}/{repo}/branches/{branch}", `/repos/${REPO}/branches/main`],
      ["GET /repos/{owner}/{repo}/git/commits/{sha}", `/repos/${REPO}/git/commits/${ids.sha}`],
      ["GET /repos/{owner}/{repo}", `/repos/${REPO}`],
      ["GET /repos/{owner}/{repo}/branch_protections/{name}", `/repos/${REPO}/branch_protections/main`],
      ["GET /user", "/user"],
      ["GET /repos/{owner}/{repo}/pulls/{index}/reviews", `/repos/${REPO}/pulls/${ids.pull}/reviews`],
      [
        "GET /repos/{owner}/{repo}/pulls/{index}/reviews/{id}/comments",
        `/repos/${REPO}/pulls/${ids.pull}/reviews/${ids.review}/comments`,
      ],
    ];
    for (const [operation, path] of gitea) {
      const shape = doc.operations[operation]?.response;
      if (!shape) throw new Error(`no documented answer for ${operation}`);
      expect(misfits(doc, await answer("gitea", path), shape).join("\n"), operation).toBe("");
    }
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CachedAnswer } from "../../../src/forge/client/http.ts";
import { ForgeHttpError, GitHubClient } from "../../../src/forge/client/index.ts";
import { empty, FakeForge, json } from "./fake-forge.ts";
import {
  githubCombinedStatus,
  githubComment,
  githubComparison,
  githubError,
  githubHook,
  githubIssue,
  githubLabel,
  githubMerged,
  githubPermission,
  githubPull,
  githubPullSimple,
  githubReview,
  githubStatus,
  githubValidationError,
} from "./fixtures/github.ts";
import { brief, makeClient, rejection, TOKEN } from "./setup.ts";

const R = "/repos/acme/widgets";
const MERGE_DOCS = "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request";

let forge: FakeForge;

beforeAll(async () => {
  forge = await FakeForge.start();
});

afterEach(() => {
  for (const request of forge.requests) {
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers["x-github-api-version"]).toBe("2022-11-28");
    expect(request.headers["user-agent"]).toBe("conveyor");
  }
  expect(forge.pending()).toEqual([]);
  forge.reset();
});

afterAll(async () => {
  await forge.close();
});

function client() {
  return makeClient("github", forge.apiUrl).client;
}

describe("GitHub client", () => {
  it("is chosen for github", () => {
    expect(client()).toBeInstanceOf(GitHubClient);
    expect(client().forge).toBe("github");
  });

  it("getIssue sends GitHub's headers and maps the issue", async () => {
    forge.on(
      "GET",
      `${R}/issues/7`,
      json(200, githubIssue(7, { title: "Widget breaks", body: null, labels: [githubLabel(1, "backlog")] })),
    );

    expect(await client().getIssue(7)).toEqual({
      number: 7,
      title: "Widget breaks",
      body: "",
      state: "open",
      labels: ["backlog"],
      author: "alice",
      isPullRequest: false,
    });
    expect(forge.requests[0]?.headers.accept).toBe("application/vnd.github+json");
  });

  it("getIssue recognises a pull request", async () => {
    forge.on("GET", `${R}/issues/12`, json(200, githubIssue(12, { pull: true })));

    expect((await client().getIssue(12)).isPullRequest).toBe(true);
  });

  it("serves GitHub Enterprise under /api/v3", async () => {
    const enterprise = await FakeForge.start("/api/v3");
    try {
      enterprise.on("GET", `${R}/issues/7`, json(200, githubIssue(7)));
      const { client: ghe } = makeClient("github", enterprise.apiUrl);

      expect((await ghe.getIssue(7)).number).toBe(7);
      expect(enterprise.requests.map((request) => request.path)).toEqual([`${R}/issues/7`]);
    } finally {
      await enterprise.close();
    }
  });

  it("listComments follows pages", async () => {
    const link = `<https://api.github.com/repositories/186853002/issues/7/comments?per_page=100&page=2>`;
    forge.on(
      "GET",
      `${R}/issues/7/comments`,
      json(200, [githubComment(1, "one")], { link: `${link}; rel="next", ${link}; rel="last"` }),
      json(200, [githubComment(2, "two", "bob")], {
        link: `<https://api.github.com/repositories/186853002/issues/7/comments?per_page=100&page=1>; rel="prev"`,
      }),
    );

    const comments = await client().listComments(7);

    expect(comments).toEqual([
      { id: 1, body: "one", author: "alice", createdAt: "2026-11-20T09:30:00Z" },
      { id: 2, body: "two", author: "bob", createdAt: "2026-11-20T09:30:00Z" },
    ]);
    expect(forge.requests.map((request) => request.query)).toEqual([
      { per_page: "100", page: "1" },
      { per_page: "100", page: "2" },
    ]);
  });

  it("listIssuesByLabel pages through and leaves pull requests out", async () => {
    const backlog = githubLabel(1, "backlog");
    const link = (n: number, rel: string) =>
      `<https://api.github.com/repositories/186853002/issues?labels=backlog&state=closed&per_page=100&page=${n}>; rel="${rel}"`;
    forge.on(
      "GET",
      `${R}/issues`,
      json(200, [githubIssue(1, { labels: [backlog] }), githubIssue(2, { labels: [backlog], pull: true })], {
        link: `${link(2, "next")}, ${link(3, "last")}`,
      }),
      json(200, [githubIssue(3, { labels: [backlog] })], {
        link: `${link(1, "prev")}, ${link(3, "next")}, ${link(3, "last")}, ${link(1, "first")}`,
      }),
      json(200, [githubIssue(4, { labels: [backlog] })], { link: `${link(2, "prev")}, ${link(1, "first")}` }),
    );

    const issues = await client().listIssuesByLabel("backlog", "closed");

    expect(issues.map((issue) => issue.number)).toEqual([1, 3, 4]);
    expect(forge.requests.map(brief)).toEqual(
      [1, 2, 3].map((page) => ({
        method: "GET",
        path: `${R}/issues`,
        query: { state: "closed", labels: "backlog", per_page: "100", page: String(page) },
        body: undefined,
      })),
    );
  });

  it("listUpdatedSince asks for issues and pull requests by update, oldest first, conditionally", async () => {
    const store = new Map<string, CachedAnswer>();
    const conditional = {
      get: (url: string) => store.get(url),
      put: (url: string, a: CachedAnswer) => store.set(url, a),
    };
    const statuses: number[] = [];
    const { client: conditionalClient } = makeClient("github", forge.apiUrl, {
      conditional,
      observe: ({ status }) => statuses.push(status),
    });
    const etag = { etag: 'W/"listing-1"' };
    forge.on("GET", `${R}/issues`, json(200, [githubIssue(1), githubIssue(2, { pull: true })], etag), {
      status: 304,
      headers: etag,
    });
    const since = "2026-11-25T10:00:00Z";
    const first = await conditionalClient.listUpdatedSince(since);
    const again = await conditionalClient.listUpdatedSince(since);

    expect(first.items.map((i) => [i.number, i.isPullRequest, i.comments])).toEqual([
      [1, false, 0],
      [2, true, 0],
    ]);
    expect(again.items).toEqual(first.items);
    expect(statuses).toEqual([200, 304]);
    expect(forge.requests[0]?.query).toEqual({
      state: "all",
      sort: "updated",
      direction: "asc",
      since,
      per_page: "100",
      page: "1",
    });
    expect(forge.requests[0]?.headers["if-none-match"]).toBeUndefined();
    expect(forge.requests[1]?.headers["if-none-match"]).toBe('W/"listing-1"');
  });

  it("listIssuesByLabel stops after one page without a Link header", async () => {
    forge.on("GET", `${R}/issues`, json(200, [githubIssue(1, { labels: [githubLabel(1, "backlog")] })]));

    expect(await client().listIssuesByLabel("backlog")).toHaveLength(1);
    expect(forge.requests[0]?.query.state).toBe("open");
  });

  it("addLabels posts names (GitHub creates unknown labels itself)", async () => {
    forge.on(
      "POST",
      `${R}/issues/7/labels`,
      json(200, [githubLabel(1, "backlog"), githubLabel(2, "in-progress")]),
    );

    await client().addLabels(7, ["backlog", "in-progress"]);

    expect(forge.requests.map(brief)).toEqual([
      {
        method: "POST",
        path: `${R}/issues/7/labels`,
        query: {},
        body: { labels: ["backlog", "in-progress"] },
      },
    ]);
    expect(forge.requests[0]?.headers["content-type"]).toBe("application/json");
  });

  it("removeLabel deletes by (encoded) name", async () => {
    forge.on("DELETE", `${R}/issues/7/labels/loop%3Aabandon`, json(200, [githubLabel(1, "backlog")]));

    await client().removeLabel(7, "loop:abandon");

    expect(forge.requests.map((request) => request.method)).toEqual(["DELETE"]);
  });

  it("removeLabel of a label not on the issue succeeds (404 Label does not exist)", async () => {
    const docs = "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue";
    forge.on(
      "DELETE",
      `${R}/issues/7/labels/in-progress`,
      json(404, githubError(404, "Label does not exist", docs)),
    );

    await expect(client().removeLabel(7, "in-progress")).resolves.toBeUndefined();
    expect(forge.requests).toHaveLength(1);
  });

  it("comment", async () => {
    forge.on("POST", `${R}/issues/7/comments`, json(201, githubComment(1_234_567_890, "Working on it")));

    expect(await client().comment(7, "Working on it")).toEqual({ id: 1_234_567_890 });
    expect(forge.requests[0]?.body).toEqual({ body: "Working on it" });
  });

  it("createPullRequest", async () => {
    forge.on("POST", `${R}/pulls`, json(201, githubPull(12)));

    expect(
      await client().createPullRequest({
        head: "conveyor/7-fix-widget",
        base: "main",
        title: "Fix",
        body: "Closes #7",
      }),
    ).toEqual({
      number: 12,
      url: "https://github.com/acme/widgets/pull/12",
      headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
    });
    expect(forge.requests.map(brief)).toEqual([
      {
        method: "POST",
        path: `${R}/pulls`,
        query: {},
        body: { head: "conveyor/7-fix-widget", base: "main", title: "Fix", body: "Closes #7" },
      },
    ]);
  });

  it("createPullRequest surfaces GitHub's validation detail", async () => {
    forge.on(
      "POST",
      `${R}/pulls`,
      json(
        422,
        githubValidationError("Validation Failed", [
          {
            resource: "PullRequest",
            code: "custom",
            message: "A pull request already exists for acme:conveyor/7.",
          },
        ]),
      ),
    );

    const error = await rejection(
      client().createPullRequest({ head: "conveyor/7", base: "main", title: "Fix", body: "" }),
    );

    expect(error.message).toBe(
      `github: POST ${R}/pulls returned 422: Validation Failed: A pull request already exists for acme:conveyor/7.`,
    );
    expect(forge.requests).toHaveLength(1);
  });

  it("updatePullRequest", async () => {
    forge.on("PATCH", `${R}/pulls/12`, json(200, githubPull(12)));

    await client().updatePullRequest(12, { title: "Fix the widget (v2)", body: "Closes #7\n\nRevised." });

    expect(forge.requests[0]?.body).toEqual({ title: "Fix the widget (v2)", body: "Closes #7\n\nRevised." });
  });

  it("getPullRequest keeps mergeable null while GitHub computes it", async () => {
    forge.on("GET", `${R}/pulls/12`, json(200, githubPull(12, { mergeable: null })));

    expect(await client().getPullRequest(12)).toEqual({
      number: 12,
      state: "open",
      merged: false,
      mergeable: null,
      headRef: "conveyor/7-fix-widget",
      headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
      baseRef: "main",
    });
  });

  it("getMergeability takes GitHub's behind, dirty and unknown as they are, without another read", async () => {
    forge
      .on("GET", `${R}/pulls/12`, json(200, githubPull(12, { mergeableState: "behind" })))
      .on("GET", `${R}/pulls/13`, json(200, githubPull(13, { mergeable: false, mergeableState: "dirty" })))
      .on("GET", `${R}/pulls/14`, json(200, githubPull(14, { mergeable: null, mergeableState: "unknown" })));

    expect(await client().getMergeability(12)).toEqual({ kind: "behind" });
    expect(await client().getMergeability(13)).toEqual({ kind: "conflict", files: [] });
    expect(await client().getMergeability(14)).toEqual({ kind: "unknown" });
    expect(forge.requests.map((request) => request.path)).toEqual([
      `${R}/pulls/12`,
      `${R}/pulls/13`,
      `${R}/pulls/14`,
    ]);
  });

  it("getMergeability compares the base with the head where GitHub's state leaves it open (no strict protection)", async () => {
    const compare = `${R}/compare/main...ec26c3e57ca3a959ca5aad62de7213c562f8c821`;
    forge
      .on(
        "GET",
        `${R}/pulls/12`,
        json(200, githubPull(12)),
        json(200, githubPull(12, { mergeableState: "blocked" })),
      )
      .on("GET", compare, json(200, githubComparison(1, 3)), json(200, githubComparison(1, 0)));

    // `clean`, yet 3 commits of main are not in the head: behind all the same.
    expect(await client().getMergeability(12)).toEqual({ kind: "behind" });
    expect(await client().getMergeability(12)).toEqual({ kind: "current" });
    expect(forge.requests.map((request) => request.path)).toEqual([
      `${R}/pulls/12`,
      compare,
      `${R}/pulls/12`,
      compare,
    ]);
    expect(forge.requests[1]?.query).toEqual({ per_page: "1" });
  });

  it("findOpenPullRequest filters by owner:branch and base, and checks the match", async () => {
    // GitHub lists the shorter shape, without `merged` and `mergeable`.
    forge.on("GET", `${R}/pulls`, json(200, [githubPullSimple(12, { head: "conveyor/7" })]));

    expect(await client().findOpenPullRequest("conveyor/7", "main")).toEqual({
      number: 12,
      state: "open",
      headRef: "conveyor/7",
      headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
      baseRef: "main",
    });
    expect(forge.requests[0]?.query).toMatchObject({ state: "open", head: "acme:conveyor/7", base: "main" });
    forge.on("GET", `${R}/pulls`, json(200, []));
    expect(await client().findOpenPullRequest("conveyor/8", "main")).toBeNull();
  });

  it("getPullRequestDiff asks for the diff media type", async () => {
    const diff = "diff --git a/README.md b/README.md\nindex 1..2 100644\n";
    forge.on("GET", `${R}/pulls/12`, {
      status: 200,
      text: diff,
      headers: { "content-type": "application/vnd.github.diff; charset=utf-8" },
    });

    expect(await client().getPullRequestDiff(12)).toBe(diff);
    expect(forge.requests[0]?.headers.accept).toBe("application/vnd.github.diff");
  });

  it("getCombinedStatus", async () => {
    forge.on(
      "GET",
      `${R}/commits/ec26c3e5/status`,
      json(
        200,
        githubCombinedStatus("pending", [
          githubStatus(1, "ci/build", "success"),
          githubStatus(2, "ci/e2e", "pending"),
          githubStatus(3, "ci/lint", "error"),
        ]),
      ),
    );

    expect(await client().getCombinedStatus("ec26c3e5")).toEqual({
      state: "pending",
      statuses: [
        {
          context: "ci/build",
          state: "success",
          targetUrl: "https://ci.example.com/build/1",
          description: "Build success",
        },
        { context: "ci/e2e", state: "pending", targetUrl: null, description: null },
        {
          context: "ci/lint",
          state: "error",
          targetUrl: "https://ci.example.com/build/3",
          description: "Build error",
        },
      ],
    });
    expect(forge.requests[0]?.query).toEqual({ per_page: "100" });
  });

  describe("mergePullRequest", () => {
    it("merges with PUT", async () => {
      forge.on("PUT", `${R}/pulls/12/merge`, json(200, githubMerged()));

      const result = await client().mergePullRequest(12, {
        method: "squash",
        sha: "ec26c3e5",
        title: "Fix (#12)",
      });

      expect(result).toEqual({ kind: "merged", merged: true });
      expect(forge.requests.map(brief)).toEqual([
        {
          method: "PUT",
          path: `${R}/pulls/12/merge`,
          query: {},
          body: { merge_method: "squash", sha: "ec26c3e5", commit_title: "Fix (#12)" },
        },
      ]);
    });

    it("reports an already merged pull request (405 'not mergeable', then merged: true)", async () => {
      forge
        .on(
          "PUT",
          `${R}/pulls/12/merge`,
          json(405, githubError(405, "Pull Request is not mergeable", MERGE_DOCS)),
        )
        .on("GET", `${R}/pulls/12`, json(200, githubPull(12, { merged: true })));

      expect(await client().mergePullRequest(12, { method: "merge" })).toEqual({
        kind: "already_merged",
        merged: true,
      });
    });

    it("reports a pull request that is not mergeable", async () => {
      forge
        .on(
          "PUT",
          `${R}/pulls/12/merge`,
          json(405, githubError(405, "Pull Request is not mergeable", MERGE_DOCS)),
        )
        .on("GET", `${R}/pulls/12`, json(200, githubPull(12, { mergeable: false })));

      expect(await client().mergePullRequest(12, { method: "merge" })).toEqual({
        kind: "not_mergeable",
        merged: false,
        status: 405,
        reason: "Pull Request is not mergeable",
      });
    });

    it("reports a moved head (409)", async () => {
      forge
        .on(
          "PUT",
          `${R}/pulls/12/merge`,
          json(
            409,
            githubError(409, "Head branch was modified. Review and try the merge again.", MERGE_DOCS),
          ),
        )
        .on("GET", `${R}/pulls/12`, json(200, githubPull(12)));

      expect(await client().mergePullRequest(12, { method: "merge", sha: "0ld" })).toEqual({
        kind: "not_mergeable",
        merged: false,
        status: 409,
        reason: "Head branch was modified. Review and try the merge again.",
      });
    });

    it("throws on 403 without asking for the pull request", async () => {
      forge.on(
        "PUT",
        `${R}/pulls/12/merge`,
        json(403, githubError(403, "Resource not accessible by integration", MERGE_DOCS)),
      );

      const error = await rejection(client().mergePullRequest(12, { method: "merge" }));

      expect(error).toBeInstanceOf(ForgeHttpError);
      expect(error).toMatchObject({ status: 403, method: "PUT", path: `${R}/pulls/12/merge` });
      expect(forge.requests).toHaveLength(1);
    });
  });

  it("closeIssue", async () => {
    forge.on("PATCH", `${R}/issues/7`, json(200, githubIssue(7, { state: "closed" })));

    await client().closeIssue(7);

    expect(forge.requests.map(brief)).toEqual([
      { method: "PATCH", path: `${R}/issues/7`, query: {}, body: { state: "closed" } },
    ]);
  });

  it("createIssue sends label names", async () => {
    forge.on("POST", `${R}/issues`, json(201, githubIssue(31, { labels: [githubLabel(1, "backlog")] })));

    expect(await client().createIssue({ title: "Follow-up", body: "From #7", labels: ["backlog"] })).toEqual({
      number: 31,
    });
    expect(forge.requests[0]?.body).toEqual({ title: "Follow-up", body: "From #7", labels: ["backlog"] });
  });

  it.each([
    ["admin", "admin", "admin"],
    ["write", "maintain", "write"],
    ["read", "triage", "read"],
    ["none", "none", "none"],
  ])("getPermission maps permission %s (role %s) to %s", async (wire, role, expected) => {
    forge.on("GET", `${R}/collaborators/bob/permission`, json(200, githubPermission(wire, role)));

    expect(await client().getPermission("bob")).toBe(expected);
  });

  it("getPermission of an unknown user is none", async () => {
    forge.on("GET", `${R}/collaborators/nobody/permission`, json(404, githubError(404, "Not Found")));

    expect(await client().getPermission("nobody")).toBe("none");
  });

  it("createReview with line comments", async () => {
    forge.on("POST", `${R}/pulls/12/reviews`, json(200, githubReview(80, "CHANGES_REQUESTED")));

    const review = await client().createReview(12, {
      event: "REQUEST_CHANGES",
      body: "Two problems.",
      comments: [{ path: "src/x.ts", line: 14, body: "Off by one." }],
    });

    expect(review).toEqual({ id: 80 });
    expect(forge.requests[0]?.body).toEqual({
      event: "REQUEST_CHANGES",
      body: "Two problems.",
      comments: [{ path: "src/x.ts", line: 14, side: "RIGHT", body: "Off by one." }],
    });
  });

  it("ensureLabels creates the missing ones without '#'", async () => {
    forge
      .on("GET", `${R}/labels`, json(200, [githubLabel(1, "backlog"), githubLabel(2, "Blocked")]))
      .on("POST", `${R}/labels`, json(201, githubLabel(3, "needs-human", "b60205")));

    await client().ensureLabels(["backlog", "blocked", { name: "needs-human", color: "#B60205" }]);

    expect(forge.requests.map(brief)).toEqual([
      { method: "GET", path: `${R}/labels`, query: { per_page: "100", page: "1" }, body: undefined },
      {
        method: "POST",
        path: `${R}/labels`,
        query: {},
        body: { name: "needs-human", color: "b60205", description: "" },
      },
    ]);
  });

  it("ensureLabels rejects a colour that is not six hex digits before any request", async () => {
    await expect(client().ensureLabels([{ name: "x", color: "red" }])).rejects.toThrow(RangeError);
    expect(forge.requests).toEqual([]);
  });

  it("createWebhook", async () => {
    const events = ["issues", "issue_comment", "pull_request", "check_suite"];
    forge.on(
      "POST",
      `${R}/hooks`,
      json(201, githubHook(12345678, "https://conveyor.example/hooks/p1", events)),
    );

    expect(
      await client().createWebhook({ url: "https://conveyor.example/hooks/p1", secret: "whsec", events }),
    ).toEqual({ id: 12345678 });
    expect(forge.requests[0]?.body).toEqual({
      name: "web",
      active: true,
      events,
      config: {
        url: "https://conveyor.example/hooks/p1",
        content_type: "json",
        secret: "whsec",
        insecure_ssl: "0",
      },
    });
  });

  it("an empty 204 answer is fine where the body does not matter", async () => {
    forge.on("PATCH", `${R}/pulls/12`, empty(204));

    await expect(client().updatePullRequest(12, { body: "x" })).resolves.toBeUndefined();
  });
});

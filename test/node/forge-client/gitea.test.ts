import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ForgeHttpError, GiteaClient } from "../../../src/forge/client/index.ts";
import { empty, FakeForge, json } from "./fake-forge.ts";
import {
  giteaCombinedStatus,
  giteaComment,
  giteaError,
  giteaHook,
  giteaIssue,
  giteaLabel,
  giteaPermission,
  giteaPull,
  giteaReview,
  giteaStatus,
} from "./fixtures/gitea.ts";
import { brief, makeClient, rejection, TOKEN } from "./setup.ts";

const R = "/repos/acme/widgets";

let forge: FakeForge;

beforeAll(async () => {
  forge = await FakeForge.start("/api/v1");
});

afterEach(() => {
  // Every request authenticates the Gitea way and nothing queued was left unasked.
  for (const request of forge.requests) {
    expect(request.headers.authorization).toBe(`token ${TOKEN}`);
    expect(request.headers["user-agent"]).toBe("conveyor");
  }
  expect(forge.pending()).toEqual([]);
  forge.reset();
});

afterAll(async () => {
  await forge.close();
});

function client(kind: "gitea" | "forgejo" = "forgejo") {
  return makeClient(kind, forge.apiUrl).client;
}

function labelList(...labels: ReturnType<typeof giteaLabel>[]) {
  return json(200, labels, { "x-total-count": String(labels.length) });
}

describe("Gitea/Forgejo client", () => {
  it("is chosen for forgejo and gitea", () => {
    expect(client("forgejo")).toBeInstanceOf(GiteaClient);
    expect(client("forgejo").forge).toBe("forgejo");
    expect(client("gitea").forge).toBe("gitea");
  });

  it("getIssue sends the token header and maps the issue", async () => {
    forge.on(
      "GET",
      `${R}/issues/7`,
      json(
        200,
        giteaIssue(7, { title: "Widget breaks", body: "Steps…", labels: [giteaLabel(3, "backlog")] }),
      ),
    );

    const issue = await client().getIssue(7);

    expect(issue).toEqual({
      number: 7,
      title: "Widget breaks",
      body: "Steps…",
      state: "open",
      labels: ["backlog"],
      author: "alice",
      isPullRequest: false,
    });
    const [request] = forge.requests;
    expect(request && brief(request)).toEqual({
      method: "GET",
      path: `${R}/issues/7`,
      query: {},
      body: undefined,
    });
    expect(request?.headers.accept).toBe("application/json");
    expect(request?.headers["content-type"]).toBeUndefined();
  });

  it("getIssue tells a pull request by its pull_request field and accepts null labels", async () => {
    forge.on(
      "GET",
      `${R}/issues/12`,
      json(200, giteaIssue(12, { pull: true, labels: null, state: "closed" })),
    );

    const issue = await client().getIssue(12);

    expect(issue).toMatchObject({ number: 12, isPullRequest: true, labels: [], state: "closed" });
  });

  it("listComments reads the one unpaged list", async () => {
    forge.on(
      "GET",
      `${R}/issues/7/comments`,
      json(200, [giteaComment(501, "first", "alice"), giteaComment(502, "/conveyor retry", "bob")]),
    );

    const comments = await client().listComments(7);

    expect(comments).toEqual([
      { id: 501, body: "first", author: "alice", createdAt: "2026-11-20T09:30:00Z" },
      { id: 502, body: "/conveyor retry", author: "bob", createdAt: "2026-11-20T09:30:00Z" },
    ]);
    expect(forge.requests.map(brief)).toEqual([
      { method: "GET", path: `${R}/issues/7/comments`, query: {}, body: undefined },
    ]);
  });

  it("listIssuesByLabel follows pages by Link and keeps only labelled issues", async () => {
    const backlog = giteaLabel(3, "backlog");
    const page = (n: number) =>
      `<https://codeberg.org/api/v1/repos/acme/widgets/issues?labels=backlog&page=${n}>`;
    forge.on(
      "GET",
      `${R}/issues`,
      json(200, [giteaIssue(1, { labels: [backlog] }), giteaIssue(2, { labels: [backlog] })], {
        link: `${page(2)}; rel="next",${page(2)}; rel="last"`,
        "x-total-count": "4",
      }),
      json(200, [giteaIssue(3, { labels: [backlog] }), giteaIssue(4, { labels: [] })], {
        link: `${page(1)}; rel="first",${page(1)}; rel="prev"`,
        "x-total-count": "4",
      }),
    );

    const issues = await client().listIssuesByLabel("backlog");

    expect(issues.map((issue) => issue.number)).toEqual([1, 2, 3]);
    expect(forge.requests.map(brief)).toEqual([
      {
        method: "GET",
        path: `${R}/issues`,
        query: { state: "open", labels: "backlog", type: "issues", limit: "50", page: "1" },
        body: undefined,
      },
      {
        method: "GET",
        path: `${R}/issues`,
        query: { state: "open", labels: "backlog", type: "issues", limit: "50", page: "2" },
        body: undefined,
      },
    ]);
  });

  it("listIssuesByLabel does not trust a filter Gitea dropped for an unknown label", async () => {
    // Gitea discards unknown labels from the filter and lists everything.
    forge.on("GET", `${R}/issues`, json(200, [giteaIssue(1, { labels: [giteaLabel(4, "bug")] })]));

    expect(await client().listIssuesByLabel("no-such-label", "all")).toEqual([]);
    expect(forge.requests[0]?.query.state).toBe("all");
  });

  it("addLabels resolves names to ids, creating the missing label", async () => {
    forge
      .on("GET", `${R}/labels`, labelList(giteaLabel(3, "backlog"), giteaLabel(4, "bug")))
      .on("POST", `${R}/labels`, json(201, giteaLabel(9, "in-progress", "ededed")))
      .on(
        "POST",
        `${R}/issues/7/labels`,
        json(200, [giteaLabel(3, "backlog"), giteaLabel(9, "in-progress")]),
      );

    await client().addLabels(7, ["Backlog", "in-progress"]);

    expect(forge.requests.map(brief)).toEqual([
      { method: "GET", path: `${R}/labels`, query: { limit: "50", page: "1" }, body: undefined },
      {
        method: "POST",
        path: `${R}/labels`,
        query: {},
        body: { name: "in-progress", color: "#ededed", description: "" },
      },
      { method: "POST", path: `${R}/issues/7/labels`, query: {}, body: { labels: [3, 9] } },
    ]);
    expect(forge.requests[2]?.headers["content-type"]).toBe("application/json");
  });

  it("addLabels with no names makes no request", async () => {
    await client().addLabels(7, []);
    expect(forge.requests).toEqual([]);
  });

  it("removeLabel deletes by id", async () => {
    forge
      .on("GET", `${R}/labels`, labelList(giteaLabel(3, "backlog"), giteaLabel(5, "in-progress")))
      .on("DELETE", `${R}/issues/7/labels/5`, empty(204));

    await client().removeLabel(7, "in-progress");

    expect(forge.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      `GET ${R}/labels`,
      `DELETE ${R}/issues/7/labels/5`,
    ]);
  });

  it("removeLabel of a label the repository does not have is a no-op", async () => {
    forge.on("GET", `${R}/labels`, labelList(giteaLabel(3, "backlog")));

    await client().removeLabel(7, "in-progress");

    expect(forge.requests).toHaveLength(1);
  });

  it.each([404, 422])("removeLabel treats %i as already removed", async (status) => {
    forge
      .on("GET", `${R}/labels`, labelList(giteaLabel(5, "in-progress")))
      .on("DELETE", `${R}/issues/7/labels/5`, json(status, giteaError("label does not exist [id: 5]")));

    await expect(client().removeLabel(7, "in-progress")).resolves.toBeUndefined();
  });

  it("removeLabel still fails on 403", async () => {
    forge
      .on("GET", `${R}/labels`, labelList(giteaLabel(5, "in-progress")))
      .on("DELETE", `${R}/issues/7/labels/5`, json(403, giteaError("user should have write access")));

    const error = await rejection(client().removeLabel(7, "in-progress"));

    expect(error).toBeInstanceOf(ForgeHttpError);
    expect(error.message).toBe(
      `forgejo: DELETE ${R}/issues/7/labels/5 returned 403: user should have write access`,
    );
  });

  it("comment posts the body and returns the id", async () => {
    forge.on("POST", `${R}/issues/7/comments`, json(201, giteaComment(777, "Working on it")));

    expect(await client().comment(7, "Working on it")).toEqual({ id: 777 });
    expect(forge.requests.map(brief)).toEqual([
      { method: "POST", path: `${R}/issues/7/comments`, query: {}, body: { body: "Working on it" } },
    ]);
  });

  it("createPullRequest", async () => {
    forge.on("POST", `${R}/pulls`, json(201, giteaPull(12)));

    const created = await client().createPullRequest({
      head: "conveyor/7-fix-widget",
      base: "main",
      title: "Fix the widget",
      body: "Closes #7",
    });

    expect(created).toEqual({
      number: 12,
      url: "https://codeberg.org/acme/widgets/pulls/12",
      headSha: "d555a5dd07f4d0148a58d4686ec381502ae6a2d4",
    });
    expect(forge.requests[0]?.body).toEqual({
      head: "conveyor/7-fix-widget",
      base: "main",
      title: "Fix the widget",
      body: "Closes #7",
    });
  });

  it("updatePullRequest sends only the fields given", async () => {
    forge.on("PATCH", `${R}/pulls/12`, json(201, giteaPull(12, { state: "closed" })));

    await client().updatePullRequest(12, { state: "closed" });

    expect(forge.requests.map(brief)).toEqual([
      { method: "PATCH", path: `${R}/pulls/12`, query: {}, body: { state: "closed" } },
    ]);
  });

  it("getPullRequest", async () => {
    forge.on("GET", `${R}/pulls/12`, json(200, giteaPull(12, { mergeable: false, sha: "abc123" })));

    expect(await client().getPullRequest(12)).toEqual({
      number: 12,
      state: "open",
      merged: false,
      mergeable: false,
      headRef: "conveyor/7-fix-widget",
      headSha: "abc123",
      baseRef: "main",
    });
  });

  it("findOpenPullRequest lists open pull requests and matches head and base itself", async () => {
    forge.on(
      "GET",
      `${R}/pulls`,
      json(200, [
        giteaPull(14, { head: "conveyor/8" }),
        giteaPull(12, { head: "conveyor/7", sha: "abc123" }),
      ]),
    );

    expect(await client().findOpenPullRequest("conveyor/7", "main")).toMatchObject({
      number: 12,
      headSha: "abc123",
    });
    expect(forge.requests[0]?.query.state).toBe("open");
    forge.on("GET", `${R}/pulls`, json(200, [giteaPull(14, { head: "conveyor/8" })]));
    expect(await client().findOpenPullRequest("conveyor/9", "main")).toBeNull();
  });

  it("getPullRequestDiff reads /pulls/{n}.diff as text", async () => {
    const diff = "diff --git a/x.ts b/x.ts\n--- a/x.ts\n+++ b/x.ts\n@@ -1 +1 @@\n-a\n+b\n";
    forge.on("GET", `${R}/pulls/12.diff`, { status: 200, text: diff });

    expect(await client().getPullRequestDiff(12)).toBe(diff);
    expect(forge.requests[0]?.headers.accept).toBe("text/plain");
  });

  it("getCombinedStatus maps Gitea's status field and folds warning into failure", async () => {
    forge.on(
      "GET",
      `${R}/commits/d555a5dd/status`,
      json(
        200,
        giteaCombinedStatus("warning", [
          giteaStatus(1, "ci/woodpecker/pr/test", "success"),
          giteaStatus(2, "ci/woodpecker/pr/lint", "warning"),
        ]),
      ),
    );

    const status = await client().getCombinedStatus("d555a5dd");

    expect(status).toEqual({
      state: "failure",
      statuses: [
        {
          context: "ci/woodpecker/pr/test",
          state: "success",
          targetUrl: "https://ci.codeberg.org/repos/4242/pipeline/1",
          description: "Pipeline success",
        },
        {
          context: "ci/woodpecker/pr/lint",
          state: "failure",
          targetUrl: "https://ci.codeberg.org/repos/4242/pipeline/2",
          description: "Pipeline warning",
        },
      ],
    });
    expect(forge.requests[0]?.query).toEqual({ limit: "50" });
  });

  it("getCombinedStatus of a commit without statuses is pending", async () => {
    forge.on("GET", `${R}/commits/main/status`, json(200, giteaCombinedStatus("", null)));

    expect(await client().getCombinedStatus("main")).toEqual({ state: "pending", statuses: [] });
  });

  describe("mergePullRequest", () => {
    it("merges", async () => {
      forge.on("POST", `${R}/pulls/12/merge`, empty(200));

      const result = await client().mergePullRequest(12, {
        method: "squash",
        sha: "d555a5dd",
        title: "Fix (#12)",
      });

      expect(result).toEqual({ kind: "merged", merged: true });
      expect(forge.requests.map(brief)).toEqual([
        {
          method: "POST",
          path: `${R}/pulls/12/merge`,
          query: {},
          body: { Do: "squash", MergeTitleField: "Fix (#12)", head_commit_id: "d555a5dd" },
        },
      ]);
    });

    it("reports an already merged pull request (405 with an empty message)", async () => {
      forge
        .on("POST", `${R}/pulls/12/merge`, json(405, giteaError("")))
        .on("GET", `${R}/pulls/12`, json(200, giteaPull(12, { merged: true })));

      expect(await client().mergePullRequest(12, { method: "merge" })).toEqual({
        kind: "already_merged",
        merged: true,
      });
      expect(forge.requests.map((request) => request.method)).toEqual(["POST", "GET"]);
      expect(forge.requests[0]?.body).toEqual({ Do: "merge" });
    });

    it("reports a pull request that cannot be merged yet", async () => {
      forge
        .on("POST", `${R}/pulls/12/merge`, json(405, giteaError("Please try again later")))
        .on("GET", `${R}/pulls/12`, json(200, giteaPull(12, { mergeable: false })));

      expect(await client().mergePullRequest(12, { method: "merge" })).toEqual({
        kind: "not_mergeable",
        merged: false,
        status: 405,
        reason: "Please try again later",
      });
    });

    it("reports a conflict", async () => {
      forge
        .on("POST", `${R}/pulls/12/merge`, json(409, giteaError("head out of date")))
        .on("GET", `${R}/pulls/12`, json(200, giteaPull(12)));

      expect(await client().mergePullRequest(12, { method: "rebase", sha: "0ld" })).toMatchObject({
        kind: "not_mergeable",
        status: 409,
        reason: "head out of date",
      });
    });

    it("reports a closed pull request (Gitea answers 404)", async () => {
      forge
        .on("POST", `${R}/pulls/12/merge`, json(404, { errors: null, message: "not found", url: "" }))
        .on("GET", `${R}/pulls/12`, json(200, giteaPull(12, { state: "closed" })));

      expect(await client().mergePullRequest(12, { method: "merge" })).toEqual({
        kind: "not_mergeable",
        merged: false,
        status: 404,
        reason: "pull request is closed",
      });
    });

    it("fails when the pull request does not exist", async () => {
      forge
        .on("POST", `${R}/pulls/99/merge`, json(404, giteaError("")))
        .on("GET", `${R}/pulls/99`, json(404, giteaError("")));

      const error = await rejection(client().mergePullRequest(99, { method: "merge" }));

      expect(error).toMatchObject({ status: 404, method: "GET", path: `${R}/pulls/99` });
    });
  });

  it("closeIssue", async () => {
    forge.on("PATCH", `${R}/issues/7`, json(201, giteaIssue(7, { state: "closed" })));

    await client().closeIssue(7);

    expect(forge.requests.map(brief)).toEqual([
      { method: "PATCH", path: `${R}/issues/7`, query: {}, body: { state: "closed" } },
    ]);
  });

  it("createIssue sends label ids", async () => {
    forge
      .on("GET", `${R}/labels`, labelList(giteaLabel(3, "backlog")))
      .on("POST", `${R}/issues`, json(201, giteaIssue(31, { labels: [giteaLabel(3, "backlog")] })));

    expect(await client().createIssue({ title: "Follow-up", body: "From #7", labels: ["backlog"] })).toEqual({
      number: 31,
    });
    expect(forge.requests[1] && brief(forge.requests[1])).toEqual({
      method: "POST",
      path: `${R}/issues`,
      query: {},
      body: { title: "Follow-up", body: "From #7", labels: [3] },
    });
  });

  it("createIssue without labels does not list them", async () => {
    forge.on("POST", `${R}/issues`, json(201, giteaIssue(32)));

    await client().createIssue({ title: "T", body: "B", labels: [] });

    expect(forge.requests.map(brief)).toEqual([
      { method: "POST", path: `${R}/issues`, query: {}, body: { title: "T", body: "B", labels: [] } },
    ]);
  });

  it.each([
    ["owner", "admin"],
    ["admin", "admin"],
    ["write", "write"],
    ["read", "read"],
    ["none", "none"],
  ])("getPermission maps %s to %s", async (wire, expected) => {
    forge.on("GET", `${R}/collaborators/bob/permission`, json(200, giteaPermission(wire)));

    expect(await client().getPermission("bob")).toBe(expected);
  });

  it("getPermission of an unknown user is none", async () => {
    forge.on("GET", `${R}/collaborators/gh%20ost/permission`, json(404, giteaError("user does not exist")));

    expect(await client().getPermission("gh ost")).toBe("none");
  });

  it("createReview maps the event and line comments", async () => {
    forge.on("POST", `${R}/pulls/12/reviews`, json(200, giteaReview(88, "REQUEST_CHANGES")));

    const review = await client().createReview(12, {
      event: "REQUEST_CHANGES",
      body: "Two problems.",
      comments: [{ path: "src/x.ts", line: 14, body: "Off by one." }],
    });

    expect(review).toEqual({ id: 88 });
    expect(forge.requests[0]?.body).toEqual({
      event: "REQUEST_CHANGES",
      body: "Two problems.",
      comments: [{ path: "src/x.ts", body: "Off by one.", new_position: 14 }],
    });
  });

  it("createReview sends APPROVE as Gitea's APPROVED", async () => {
    forge.on("POST", `${R}/pulls/12/reviews`, json(200, giteaReview(89, "APPROVED")));

    await client().createReview(12, { event: "APPROVE", body: "LGTM" });

    expect(forge.requests[0]?.body).toEqual({ event: "APPROVED", body: "LGTM" });
  });

  it("ensureLabels creates only the missing labels, across pages", async () => {
    forge
      .on(
        "GET",
        `${R}/labels`,
        json(200, [giteaLabel(3, "backlog")], { "x-total-count": "2" }),
        json(200, [giteaLabel(4, "blocked")], { "x-total-count": "2" }),
      )
      .on("POST", `${R}/labels`, json(201, giteaLabel(10, "needs-human", "d73a4a")));

    await client().ensureLabels([
      "backlog",
      "blocked",
      { name: "needs-human", color: "#D73A4A", description: "Help" },
    ]);

    expect(forge.requests.map(brief)).toEqual([
      { method: "GET", path: `${R}/labels`, query: { limit: "50", page: "1" }, body: undefined },
      { method: "GET", path: `${R}/labels`, query: { limit: "50", page: "2" }, body: undefined },
      {
        method: "POST",
        path: `${R}/labels`,
        query: {},
        body: { name: "needs-human", color: "#d73a4a", description: "Help" },
      },
    ]);
  });

  it("ensureLabels settles a concurrent creation by reading the list again", async () => {
    forge
      .on("GET", `${R}/labels`, labelList(), labelList(giteaLabel(11, "blocked")))
      .on("POST", `${R}/labels`, json(422, giteaError("label already exists")));

    await expect(client().ensureLabels(["blocked"])).resolves.toBeUndefined();
    expect(forge.requests.map((request) => request.method)).toEqual(["GET", "POST", "GET"]);
  });

  it("createWebhook registers a forgejo hook with the secret", async () => {
    const events = ["issues", "issue_comment", "pull_request"];
    forge.on(
      "POST",
      `${R}/hooks`,
      json(201, giteaHook(5, "forgejo", "https://conveyor.example/hooks/p1", events)),
    );

    expect(
      await client().createWebhook({ url: "https://conveyor.example/hooks/p1", secret: "whsec", events }),
    ).toEqual({ id: 5 });
    expect(forge.requests[0]?.body).toEqual({
      type: "forgejo",
      active: true,
      events,
      config: { url: "https://conveyor.example/hooks/p1", content_type: "json", secret: "whsec" },
    });
  });

  it("createWebhook on Gitea uses the gitea hook type", async () => {
    forge.on("POST", `${R}/hooks`, json(201, giteaHook(6, "gitea", "https://c.example/h", ["push"])));

    await client("gitea").createWebhook({ url: "https://c.example/h", secret: "s", events: ["push"] });

    expect(forge.requests[0]?.body).toMatchObject({ type: "gitea" });
  });
});

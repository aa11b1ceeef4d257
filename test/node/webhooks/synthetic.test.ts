import { describe, expect, it } from "vitest";
import type { CiEvent, ForgeEvent } from "../../../src/forge/webhooks/events.ts";
import { parseDelivery } from "../../../src/forge/webhooks/parse.ts";
import {
  encodeJson,
  type FixtureJson,
  type GiteaEventNames,
  giteaHeaders,
  githubHeaders,
  readFixtureJson,
} from "./deliveries.ts";

// Cases no shared fixture covers (SOURCES.md "Gaps"), built by editing a real fixture or, for Gitea's
// `status` event, from the Go struct `CommitStatusPayload` (go-gitea/gitea modules/structs/hook.go).

async function edited(path: string, edit: (json: FixtureJson) => void): Promise<FixtureJson> {
  const json = await readFixtureJson(path);
  edit(json);
  return json;
}

function giteaEvent(event: GiteaEventNames, json: FixtureJson): ForgeEvent {
  const body = encodeJson(json);
  const { result } = parseDelivery("gitea", giteaHeaders(event, body), body);
  if (result.kind !== "event") throw new Error(`ignored: ${result.reason}`);
  return result.event;
}

function githubEvent(event: string, json: FixtureJson): ForgeEvent {
  const body = encodeJson(json);
  const { result } = parseDelivery("github", githubHeaders(event, body), body);
  if (result.kind !== "event") throw new Error(`ignored: ${result.reason}`);
  return result.event;
}

describe("Gitea issue label changes", () => {
  const issueLabel = { grouped: "issues", type: "issue_label" };

  it("label_updated → labels_updated with the complete new label set", async () => {
    const json = await edited("gitea/issues.opened.json", (json) => {
      json.action = "label_updated";
      json.issue.labels = [
        { id: 1, name: "backlog" },
        { id: 2, name: "tech-debt" },
      ];
    });
    expect(giteaEvent(issueLabel, json)).toMatchObject({
      type: "issue",
      action: "labels_updated",
      issue: { number: 1, labels: ["backlog", "tech-debt"] },
      label: null,
    });
  });

  it("label_cleared → labels_updated with no labels (Go sends a nil slice as null)", async () => {
    const json = await edited("gitea/issues.opened.json", (json) => {
      json.action = "label_cleared";
      json.issue.labels = null;
    });
    expect(giteaEvent(issueLabel, json)).toMatchObject({ action: "labels_updated", issue: { labels: [] } });
  });

  it("reopened and edited", async () => {
    for (const action of ["reopened", "edited"]) {
      const json = await edited("gitea/issues.opened.json", (json) => {
        json.action = action;
      });
      expect(giteaEvent({ grouped: "issues", type: "issues" }, json)).toMatchObject({
        type: "issue",
        action,
      });
    }
  });
});

describe("Gitea pull requests", () => {
  it("names the repository of a fork's head branch", async () => {
    const json = await edited("gitea/pull_request.synchronized.json", (json) => {
      json.pull_request.head.ref = "conveyor/12-add-login";
      json.pull_request.head.repo = { full_name: "mallory/multi-line-secrets" };
    });
    expect(giteaEvent({ grouped: "pull_request", type: "pull_request_sync" }, json)).toMatchObject({
      action: "synchronized",
      pullRequest: { headRef: "conveyor/12-add-login", headRepository: "mallory/multi-line-secrets" },
    });
  });

  it("label_cleared → labels_updated with no labels", async () => {
    const json = await edited("gitea/pull_request.label_updated.json", (json) => {
      json.action = "label_cleared";
      json.pull_request.labels = [];
    });
    expect(giteaEvent({ grouped: "pull_request", type: "pull_request_label" }, json)).toMatchObject({
      action: "labels_updated",
      pullRequest: { labels: [] },
    });
  });

  it("a review's commit_id, when Gitea sets it, is the reviewed commit", async () => {
    const json = await edited("gitea/pull_request_review.approved.json", (json) => {
      json.commit_id = "1111111111111111111111111111111111111111";
    });
    const event = { grouped: "pull_request_approved", type: "pull_request_review_approved" };
    expect(giteaEvent(event, json)).toMatchObject({
      review: { headSha: "1111111111111111111111111111111111111111" },
    });
  });

  it("a comment is on a pull request when is_pull says so", async () => {
    const json = await edited("gitea/issue_comment.created.json", (json) => {
      json.is_pull = true;
    });
    expect(giteaEvent({ grouped: "issue_comment", type: "issue_comment" }, json)).toMatchObject({
      comment: { isPullRequest: true },
    });
  });
});

describe("Gitea commit status", () => {
  // Gitea's grouped name for `status` is "" (HookEventType.Event() has no case for it).
  const status = { grouped: "", type: "status" };

  async function statusBody(state: string): Promise<FixtureJson> {
    const repository = (await readFixtureJson("gitea/pull_request.synchronized.json")).repository;
    return {
      commit: { id: "788ed8d02d3b7fcfcf6386dbcbca696aa1d4dc25", message: "fix", url: "" },
      context: "ci/woodpecker/pr/test",
      created_at: "2024-05-01T10:00:00Z",
      description: state === "pending" ? "" : "Pipeline finished",
      id: 17,
      repository,
      sender: { id: 1, login: "woodpecker", username: "woodpecker" },
      sha: "788ed8d02d3b7fcfcf6386dbcbca696aa1d4dc25",
      state,
      target_url: "https://ci.example.org/repos/1/pipeline/42",
      updated_at: "2024-05-01T10:01:00Z",
    };
  }

  it("normalizes the Go struct's fields", async () => {
    expect(giteaEvent(status, await statusBody("failure"))).toEqual({
      type: "ci",
      forge: "gitea",
      repository: "Test-CI/multi-line-secrets",
      sender: "woodpecker",
      ci: {
        sha: "788ed8d02d3b7fcfcf6386dbcbca696aa1d4dc25",
        branches: [],
        context: "ci/woodpecker/pr/test",
        state: "failure",
        targetUrl: "https://ci.example.org/repos/1/pipeline/42",
        description: "Pipeline finished",
        source: "status",
        pullNumbers: [],
        logExcerpt: null,
      },
    });
  });

  it.each([
    ["pending", "pending"],
    ["success", "success"],
    ["skipped", "success"],
    ["failure", "failure"],
    ["warning", "failure"],
    ["error", "error"],
  ])("state %s → %s", async (state, expected) => {
    expect(giteaEvent(status, await statusBody(state))).toMatchObject({ ci: { state: expected } });
  });

  it("an empty description (Go's zero value) is null", async () => {
    expect(giteaEvent(status, await statusBody("pending"))).toMatchObject({ ci: { description: null } });
  });
});

describe("GitHub issues and pull requests", () => {
  it.each(["closed", "reopened", "edited", "unlabeled"])("issue %s", async (action) => {
    const json = await edited("github/issues.labeled.json", (json) => {
      json.action = action;
    });
    expect(githubEvent("issues", json)).toMatchObject({ type: "issue", action, issue: { number: 1 } });
  });

  it.each([
    ["labeled", "labeled"],
    ["unlabeled", "unlabeled"],
    ["reopened", "reopened"],
    ["edited", "edited"],
  ])("pull request %s → %s, with the label when GitHub names it", async (action, expected) => {
    const json = await edited("github/pull_request.synchronize.json", (json) => {
      json.action = action;
      json.label = { id: 1, name: "bug" };
    });
    expect(githubEvent("pull_request", json)).toMatchObject({ action: expected, label: "bug" });
  });

  it("a fork's head repository, or none once the fork is deleted", async () => {
    const fork = await edited("github/pull_request.opened.json", (json) => {
      json.pull_request.head.repo.full_name = "mallory/Hello-World";
    });
    expect(githubEvent("pull_request", fork)).toMatchObject({
      pullRequest: { headRepository: "mallory/Hello-World" },
    });
    const gone = await edited("github/pull_request.opened.json", (json) => {
      json.pull_request.head.repo = null;
    });
    expect(githubEvent("pull_request", gone)).toMatchObject({ pullRequest: { headRepository: null } });
  });

  it("a comment on a pull request", async () => {
    const json = await edited("github/issue_comment.created.json", (json) => {
      json.issue.pull_request = { url: "https://api.github.com/repos/Codertocat/Hello-World/pulls/1" };
    });
    expect(githubEvent("issue_comment", json)).toMatchObject({ comment: { isPullRequest: true } });
  });

  it.each([
    ["approved", "approved"],
    ["APPROVED", "approved"],
    ["changes_requested", "changes_requested"],
    ["CHANGES_REQUESTED", "changes_requested"],
  ])("review state %s → %s", async (state, expected) => {
    const json = await edited("github/pull_request_review.submitted.json", (json) => {
      json.review.state = state;
      json.review.body = "Looks good";
    });
    expect(githubEvent("pull_request_review", json)).toMatchObject({
      review: { state: expected, body: "Looks good", author: "Codertocat" },
    });
  });

  it("a review by a deleted account is by ghost", async () => {
    const json = await edited("github/pull_request_review.submitted.json", (json) => {
      json.review.user = null;
    });
    expect(githubEvent("pull_request_review", json)).toMatchObject({ review: { author: "ghost" } });
  });
});

describe("GitHub check and workflow states", () => {
  async function ciState(
    event: string,
    path: string,
    key: string,
    status: string,
    conclusion: string | null,
  ) {
    const json = await edited(path, (json) => {
      json[key].status = status;
      json[key].conclusion = conclusion;
    });
    return (githubEvent(event, json) as CiEvent).ci.state;
  }

  const sources = [
    ["check_run", "github/check_run.completed.success.json"],
    ["check_suite", "github/check_suite.completed.json"],
    ["workflow_run", "github/workflow_run.completed.json"],
    ["workflow_job", "github/workflow_job.completed.success.json"],
  ] as const;

  const outcomes: [string, string | null, string][] = [
    ["completed", "success", "success"],
    ["completed", "neutral", "success"],
    ["completed", "skipped", "success"],
    ["completed", "failure", "failure"],
    ["completed", "timed_out", "failure"],
    ["completed", "cancelled", "failure"],
    ["completed", "action_required", "failure"],
    ["completed", "startup_failure", "failure"],
    ["completed", "stale", "failure"],
    ["completed", "some_future_conclusion", "failure"],
    ["completed", null, "error"],
    ["queued", null, "pending"],
    ["in_progress", null, "pending"],
    ["waiting", null, "pending"],
    ["requested", null, "pending"],
  ];

  it.each(sources.flatMap(([event, path]) => outcomes.map((outcome) => [event, path, ...outcome] as const)))(
    "%s: status %s, conclusion %s → %s",
    async (event, path, status, conclusion, expected) => {
      expect(await ciState(event, path, event, status, conclusion)).toBe(expected);
    },
  );

  it("a check run's output is its log excerpt", async () => {
    const json = await edited("github/check_run.completed.failure.json", (json) => {
      json.check_run.output = {
        title: "2 errors",
        summary: "Lint failed",
        text: "src/a.ts:1 no-unused-vars",
      };
    });
    expect(githubEvent("check_run", json)).toMatchObject({
      ci: { logExcerpt: "2 errors\n\nLint failed\n\nsrc/a.ts:1 no-unused-vars" },
    });
  });

  it("a check run without a page of its own links its details URL", async () => {
    const json = await edited("github/check_run.completed.failure.json", (json) => {
      json.check_run.html_url = null;
    });
    expect(githubEvent("check_run", json)).toMatchObject({ ci: { targetUrl: "https://octocoders.io" } });
  });

  it("a workflow job without a workflow name is named by the job alone", async () => {
    const json = await edited("github/workflow_job.completed.success.json", (json) => {
      json.workflow_job.workflow_name = null;
    });
    expect(githubEvent("workflow_job", json)).toMatchObject({ ci: { context: "linters" } });
  });

  it("a workflow run with a name is named by it", async () => {
    const json = await edited("github/workflow_run.completed.json", (json) => {
      json.workflow_run.name = "CI";
    });
    expect(githubEvent("workflow_run", json)).toMatchObject({ ci: { context: "CI" } });
  });
});

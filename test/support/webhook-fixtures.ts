import type { DeliveryResult, ForgeEvent } from "../../src/forge/webhooks/events.ts";
import type { Delivery } from "./webhook-headers.ts";

// What every webhook fixture must normalize to, with the event headers its forge sends for it
// (test/fixtures/webhooks/SOURCES.md). Values are copied from the fixture files by hand.

export type FixtureCase = { delivery: Delivery; eventName: string; expected: DeliveryResult };

const event = (value: ForgeEvent): DeliveryResult => ({ kind: "event", event: value });
const ignored = (reason: string): DeliveryResult => ({ kind: "ignored", reason });

const gitea = (grouped: string, type: string) => ({ forge: "gitea" as const, event: { grouped, type } });
const forgejo = (grouped: string, type: string) => ({ forge: "forgejo" as const, event: { grouped, type } });
const github = (name: string) => ({ forge: "github" as const, event: name });

// Gitea's 2023 gitea.com captures; Woodpecker's "forgejo" copies only rewrite the host.
const ANBRATEN_PR = {
  number: 1,
  title: "Adjust file",
  body: "",
  headRef: "anbraten-patch-1",
  headSha: "d555a5dd07f4d0148a58d4686ec381502ae6a2d4",
  headRepository: "anbraten/test-repo",
  baseRef: "main",
  author: "anbraten",
  labels: [],
};

/** A pull request's dates where a capture sends none, in the state it says. */
const UNDATED = (state: "open" | "closed" | null) => ({
  state,
  createdAt: null,
  updatedAt: null,
  closedAt: null,
});

const GORDON_PR = {
  number: 1,
  title: "Update the README with new information",
  body: "please merge",
  headRef: "feature/changes",
  headSha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
  headRepository: null,
  baseRef: "main",
  merged: false,
  author: "gordon",
  labels: [],
  ...UNDATED("open"),
};

const SYNC_PR = {
  number: 2,
  title: "New Pull",
  body: "create an awesome pull",
  headRef: "test-patch-1",
  headSha: "788ed8d02d3b7fcfcf6386dbcbca696aa1d4dc25",
  headRepository: null,
  baseRef: "main",
  merged: false,
  author: "test",
  labels: ["Kind/Bug", "Kind/Security"],
  state: "open" as const,
  createdAt: "2024-02-22T01:38:39+01:00",
  updatedAt: "2024-02-22T01:42:03+01:00",
  closedAt: null,
};

const giteaPull = (forge: "gitea" | "forgejo") => ({
  "pull_request.opened.json": {
    eventName: "pull_request",
    expected: event({
      type: "pull_request",
      action: "opened",
      forge,
      repository: "gordon/hello-world",
      sender: "gordon",
      pullRequest: GORDON_PR,
      label: null,
    }),
  },
  "pull_request.synchronized.json": {
    eventName: "pull_request_sync",
    expected: event({
      type: "pull_request",
      action: "synchronized",
      forge,
      repository: "Test-CI/multi-line-secrets",
      sender: "test",
      pullRequest: SYNC_PR,
      label: null,
    }),
  },
  "pull_request.closed.json": {
    eventName: "pull_request",
    expected: event({
      type: "pull_request",
      action: "closed",
      forge,
      repository: "anbraten/test-repo",
      sender: "anbraten",
      pullRequest: {
        ...ANBRATEN_PR,
        merged: false,
        state: "closed",
        createdAt: "2023-12-05T18:06:38Z",
        updatedAt: "2023-12-05T18:06:43Z",
        closedAt: "2023-12-05T18:06:43Z",
        comments: 0,
      },
      label: null,
    }),
  },
  "pull_request.closed.merged.json": {
    eventName: "pull_request",
    expected: event({
      type: "pull_request",
      action: "merged",
      forge,
      repository: "anbraten/test-repo",
      sender: "anbraten",
      pullRequest: {
        ...ANBRATEN_PR,
        merged: true,
        state: "closed",
        createdAt: "2023-12-05T18:06:38Z",
        updatedAt: "2023-12-05T18:35:31Z",
        closedAt: "2023-12-05T18:35:31Z",
        comments: 1,
      },
      label: null,
    }),
  },
  "push.json": { eventName: "push", expected: ignored("event push is not used") },
});

const GROUPED: Record<string, string> = {
  pull_request_sync: "pull_request",
  pull_request_label: "pull_request",
  pull_request_review_approved: "pull_request_approved",
  pull_request_review_rejected: "pull_request_rejected",
  pull_request_review_comment: "pull_request_comment",
  pull_request_comment: "issue_comment",
};

type Expectation = { eventName: string; expected: DeliveryResult };

function withHeaders(
  forge: "gitea" | "forgejo",
  cases: Record<string, Expectation>,
): Record<string, FixtureCase> {
  const make = forge === "gitea" ? gitea : forgejo;
  return Object.fromEntries(
    Object.entries(cases).map(([file, { eventName, expected }]) => [
      `${forge}/${file}`,
      { delivery: make(GROUPED[eventName] ?? eventName, eventName), eventName, expected },
    ]),
  );
}

const REVIEW_PR = { repository: "a_nice_user/hello_world_ci", sender: "a_nice_user" };
const REVIEW_SHA = "07977177c2cd7d46bad37b8472a9d50e7acb9d1f";

const GITEA: Record<string, FixtureCase> = withHeaders("gitea", {
  ...giteaPull("gitea"),
  "pull_request.label_updated.json": {
    eventName: "pull_request_label",
    expected: event({
      type: "pull_request",
      action: "labels_updated",
      forge: "gitea",
      ...REVIEW_PR,
      pullRequest: {
        number: 7,
        title: "somepull",
        body: "wow aaa new pulll body",
        headRef: "jony-patch-1",
        headSha: REVIEW_SHA,
        headRepository: "a_nice_user/hello_world_ci",
        baseRef: "main",
        merged: false,
        author: "jony",
        labels: ["bug", "help wanted"],
        ...UNDATED("open"),
      },
      label: null,
    }),
  },
  "pull_request_review.approved.json": {
    eventName: "pull_request_review_approved",
    expected: event({
      type: "review",
      forge: "gitea",
      ...REVIEW_PR,
      review: {
        pullNumber: 7,
        reviewId: null,
        state: "approved",
        body: "juhu thats a great idea",
        author: "a_nice_user",
        headSha: REVIEW_SHA,
      },
    }),
  },
  "pull_request_review.rejected.json": {
    eventName: "pull_request_review_rejected",
    expected: event({
      type: "review",
      forge: "gitea",
      ...REVIEW_PR,
      review: {
        pullNumber: 7,
        reviewId: null,
        state: "changes_requested",
        body: "I decided otherwhies :O",
        author: "a_nice_user",
        headSha: REVIEW_SHA,
      },
    }),
  },
  "pull_request_review.comment.json": {
    eventName: "pull_request_review_comment",
    expected: event({
      type: "review",
      forge: "gitea",
      ...REVIEW_PR,
      review: {
        pullNumber: 7,
        reviewId: null,
        state: "commented",
        body: "and somethimes you have to comment",
        author: "a_nice_user",
        headSha: REVIEW_SHA,
      },
    }),
  },
  "issues.opened.json": {
    eventName: "issues",
    expected: event({
      type: "issue",
      action: "opened",
      forge: "gitea",
      repository: "gogits/hello-world",
      sender: "unknwon",
      issue: {
        number: 1,
        title: "Problem",
        body: "Found a bug",
        state: "open",
        labels: [],
        author: "unknwon",
        createdAt: "2017-12-09T01:30:43Z",
        updatedAt: "2017-12-09T01:30:43Z",
        closedAt: null,
        comments: 0,
      },
      label: null,
    }),
  },
  "issues.closed.json": {
    eventName: "issues",
    expected: event({
      type: "issue",
      action: "closed",
      forge: "gitea",
      repository: "gogits/hello-world",
      sender: "unknwon",
      issue: {
        number: 1,
        title: "Problem",
        body: "Closed #1",
        state: "closed",
        labels: [],
        author: "unknwon",
        createdAt: "2017-12-09T01:40:00Z",
        updatedAt: "2017-12-09T01:41:37Z",
        closedAt: null,
        comments: 0,
      },
      label: null,
    }),
  },
  "issue_comment.created.json": {
    eventName: "issue_comment",
    expected: event({
      type: "comment",
      action: "created",
      forge: "gitea",
      repository: "gogits/hello-world",
      sender: "unknwon",
      comment: { issueNumber: 1, isPullRequest: false, commentId: 43, body: "Got it", author: "unknwon" },
    }),
  },
  "issue_comment.created.on_pull.json": {
    eventName: "pull_request_comment",
    expected: event({
      type: "comment",
      action: "created",
      forge: "gitea",
      repository: "gogits/hello-world",
      sender: "unknwon",
      comment: { issueNumber: 2, isPullRequest: true, commentId: 45, body: "run gofmt", author: "unknwon" },
    }),
  },
});

const FORGEJO: Record<string, FixtureCase> = withHeaders("forgejo", {
  ...giteaPull("forgejo"),
  // The one real Codeberg capture: no `state` on the pull request, labels on it.
  "pull_request.label_updated.json": {
    eventName: "pull_request_label",
    expected: event({
      type: "pull_request",
      action: "labels_updated",
      forge: "forgejo",
      repository: "test_it/test_ci_thing",
      sender: "6543",
      pullRequest: {
        number: 1,
        title: "Some ned more AAAA",
        body: "",
        headRef: "6543-patch-1",
        headSha: "36b5813240a9d2daa29b05046d56a53e18f39a3e",
        headRepository: "test_it/test_ci_thing",
        baseRef: "main",
        merged: false,
        author: "6543",
        labels: ["Kind/Documentation", "Kind/Enhancement"],
        ...UNDATED(null),
      },
      label: null,
    }),
  },
});

const HELLO = { forge: "github" as const, repository: "Codertocat/Hello-World", sender: "Codertocat" };
const SPELLING_ISSUE = {
  number: 1,
  title: "Spelling error in the README file",
  body: "It looks like you accidently spelled 'commit' with two 't's.",
  state: "open" as const,
  labels: ["bug"],
  author: "Codertocat",
  createdAt: "2019-05-15T15:20:18Z",
  updatedAt: "2019-05-15T15:20:18Z",
  closedAt: null,
  comments: 0,
};
const README_PR = {
  number: 2,
  title: "Update the README with new information.",
  body: "This is a pretty simple change that we need to pull into master.",
  headRef: "changes",
  headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
  headRepository: "Codertocat/Hello-World",
  baseRef: "master",
  merged: false,
  author: "Codertocat",
  labels: ["bug"],
  state: "open" as const,
  createdAt: "2019-05-15T15:20:33Z",
  updatedAt: "2019-05-15T15:20:33Z",
  closedAt: null,
  comments: 0,
};
const LINTER_RUN = {
  sha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
  branches: ["changes"],
  context: "Octocoders-linter",
  targetUrl: "https://github.com/Codertocat/Hello-World/runs/128620228",
  description: null,
  source: "check_run" as const,
  pullNumbers: [2],
  logExcerpt: null,
};
const LINTERS_JOB = {
  sha: "3484a3fb816e0859fd6e1cea078d76385ff50625",
  branches: ["main"],
  context: "CodeQL / linters",
  targetUrl: "https://github.com/octo-org/octo-repo/runs/1291536064",
  description: null,
  source: "workflow_job" as const,
  pullNumbers: [],
};

const GITHUB: Record<string, FixtureCase> = {
  "github/issues.opened.json": {
    delivery: github("issues"),
    eventName: "issues",
    expected: event({ type: "issue", action: "opened", ...HELLO, issue: SPELLING_ISSUE, label: null }),
  },
  "github/issues.labeled.json": {
    delivery: github("issues"),
    eventName: "issues",
    expected: event({ type: "issue", action: "labeled", ...HELLO, issue: SPELLING_ISSUE, label: "bug" }),
  },
  "github/issue_comment.created.json": {
    delivery: github("issue_comment"),
    eventName: "issue_comment",
    expected: event({
      type: "comment",
      action: "created",
      ...HELLO,
      comment: {
        issueNumber: 1,
        isPullRequest: false,
        commentId: 492700400,
        body: "You are totally right! I'll get this fixed right away.",
        author: "Codertocat",
      },
    }),
  },
  "github/pull_request.opened.json": {
    delivery: github("pull_request"),
    eventName: "pull_request",
    expected: event({
      type: "pull_request",
      action: "opened",
      ...HELLO,
      pullRequest: { ...README_PR, labels: [] },
      label: null,
    }),
  },
  "github/pull_request.synchronize.json": {
    delivery: github("pull_request"),
    eventName: "pull_request",
    expected: event({
      type: "pull_request",
      action: "synchronized",
      ...HELLO,
      pullRequest: README_PR,
      label: null,
    }),
  },
  "github/pull_request.closed.json": {
    delivery: github("pull_request"),
    eventName: "pull_request",
    expected: event({
      type: "pull_request",
      action: "closed",
      ...HELLO,
      pullRequest: {
        ...README_PR,
        state: "closed",
        updatedAt: "2019-05-15T15:21:18Z",
        closedAt: "2019-05-15T15:21:18Z",
      },
      label: null,
    }),
  },
  "github/pull_request.closed.merged.json": {
    delivery: github("pull_request"),
    eventName: "pull_request",
    expected: event({
      type: "pull_request",
      action: "merged",
      forge: "github",
      repository: "anbraten/test-ready-release-go",
      sender: "anbraten",
      pullRequest: {
        number: 62,
        title: "Change file",
        body: "",
        headRef: "anbraten-patch-3",
        headSha: "c88b9ee719285134957cbc698c9b7ef9b78007bf",
        headRepository: "anbraten/test-ready-release-go",
        baseRef: "main",
        merged: true,
        author: "anbraten",
        labels: [],
        state: "closed",
        createdAt: "2023-12-05T18:13:16Z",
        updatedAt: "2023-12-05T18:34:19Z",
        closedAt: "2023-12-05T18:34:19Z",
        comments: 0,
      },
      label: null,
    }),
  },
  "github/pull_request_review.submitted.json": {
    delivery: github("pull_request_review"),
    eventName: "pull_request_review",
    expected: event({
      type: "review",
      ...HELLO,
      review: {
        pullNumber: 2,
        reviewId: 237895671,
        state: "commented",
        body: "",
        author: "Codertocat",
        headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
      },
    }),
  },
  "github/pull_request_review.dismissed.json": {
    delivery: github("pull_request_review"),
    eventName: "pull_request_review",
    expected: event({
      type: "review",
      ...HELLO,
      review: {
        pullNumber: 2,
        reviewId: 237895671,
        state: "dismissed",
        body: "",
        author: "Codertocat",
        headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
      },
    }),
  },
  "github/status.json": {
    delivery: github("status"),
    eventName: "status",
    expected: event({
      type: "ci",
      ...HELLO,
      ci: {
        sha: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
        branches: ["master", "changes", "gh-pages"],
        context: "default",
        state: "success",
        targetUrl: null,
        description: null,
        source: "status",
        pullNumbers: [],
        logExcerpt: null,
      },
    }),
  },
  "github/check_run.completed.failure.json": {
    delivery: github("check_run"),
    eventName: "check_run",
    expected: event({ type: "ci", ...HELLO, ci: { ...LINTER_RUN, state: "failure" } }),
  },
  "github/check_run.completed.success.json": {
    delivery: github("check_run"),
    eventName: "check_run",
    expected: event({ type: "ci", ...HELLO, ci: { ...LINTER_RUN, state: "success" } }),
  },
  "github/check_suite.completed.json": {
    delivery: github("check_suite"),
    eventName: "check_suite",
    expected: event({
      type: "ci",
      ...HELLO,
      ci: {
        sha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
        branches: ["changes"],
        context: "octocoders-linter",
        state: "success",
        targetUrl: null,
        description: null,
        source: "check_suite",
        pullNumbers: [2],
        logExcerpt: null,
      },
    }),
  },
  "github/workflow_run.completed.json": {
    delivery: github("workflow_run"),
    eventName: "workflow_run",
    expected: event({
      type: "ci",
      forge: "github",
      repository: "octo-org/octo-repo",
      sender: "Codertocat",
      ci: {
        sha: "3484a3fb816e0859fd6e1cea078d76385ff50625",
        branches: ["master"],
        // `workflow_run.name` is "" in this capture; the workflow's name stands in.
        context: "test",
        state: "success",
        targetUrl: "https://github.com/octo-org/octo-repo/actions/runs/289782451",
        description: null,
        source: "workflow_run",
        pullNumbers: [],
        logExcerpt: null,
      },
    }),
  },
  "github/workflow_job.completed.failure.json": {
    delivery: github("workflow_job"),
    eventName: "workflow_job",
    expected: event({
      type: "ci",
      ...HELLO,
      ci: { ...LINTERS_JOB, state: "failure", logExcerpt: "Failed step: Run yarn run format-check" },
    }),
  },
  "github/workflow_job.completed.success.json": {
    delivery: github("workflow_job"),
    eventName: "workflow_job",
    expected: event({ type: "ci", ...HELLO, ci: { ...LINTERS_JOB, state: "success", logExcerpt: null } }),
  },
  "github/push.json": {
    delivery: github("push"),
    eventName: "push",
    expected: ignored("event push is not used"),
  },
  "github/ping.json": {
    delivery: github("ping"),
    eventName: "ping",
    expected: ignored("event ping is not used"),
  },
};

export const FIXTURE_CASES: Record<string, FixtureCase> = { ...GITEA, ...FORGEJO, ...GITHUB };

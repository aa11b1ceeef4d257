import { describe, expect, it } from "vitest";
import { parseDelivery } from "../../../src/forge/webhooks/parse.ts";
import { encodeJson, forgejoHeaders, giteaHeaders, githubHeaders } from "./deliveries.ts";

// An unused event or action is acknowledged and dropped without checking the rest of its shape.

describe("events Conveyor does not use", () => {
  const body = encodeJson({ ref: "refs/heads/main" });

  it.each([
    "create",
    "delete",
    "fork",
    "push",
    "release",
    "repository",
    "wiki",
    "package",
    "issue_assign",
    "issue_milestone",
    "pull_request_assign",
    "pull_request_milestone",
    "pull_request_review_request",
    "workflow_run",
  ])("gitea / forgejo %s", (type) => {
    const reason = `event ${type} is not used`;
    expect(parseDelivery("gitea", giteaHeaders({ grouped: type, type }, body), body).result).toEqual({
      kind: "ignored",
      reason,
    });
    expect(parseDelivery("forgejo", forgejoHeaders({ grouped: type, type }, body), body).result).toEqual({
      kind: "ignored",
      reason,
    });
  });

  it.each([
    "ping",
    "push",
    "create",
    "delete",
    "fork",
    "star",
    "release",
    "pull_request_review_comment",
    "pull_request_review_thread",
    "deployment_status",
    "installation",
  ])("github %s", (event) => {
    expect(parseDelivery("github", githubHeaders(event, body), body).result).toEqual({
      kind: "ignored",
      reason: `event ${event} is not used`,
    });
  });
});

describe("actions Conveyor does not use", () => {
  it.each([
    ["issues", "issues", "assigned"],
    ["issues", "issues", "milestoned"],
    ["issues", "issue_label", "synchronized"],
    ["issue_comment", "issue_comment", "pinned"],
    ["pull_request", "pull_request", "assigned"],
    ["pull_request", "pull_request", "review_requested"],
    ["pull_request", "pull_request", "reviewed"],
    ["pull_request_approved", "pull_request_review_approved", "edited"],
  ])("gitea %s / %s, action %s", (grouped, type, action) => {
    const body = encodeJson({ action });
    expect(parseDelivery("gitea", giteaHeaders({ grouped, type }, body), body).result).toEqual({
      kind: "ignored",
      reason: `${type} action ${action} is not used`,
    });
  });

  it.each([
    ["issues", "assigned"],
    ["issues", "pinned"],
    ["issues", "deleted"],
    ["issues", "transferred"],
    ["issue_comment", "pinned"],
    ["pull_request", "assigned"],
    ["pull_request", "review_requested"],
    ["pull_request", "ready_for_review"],
    ["pull_request", "converted_to_draft"],
    ["pull_request", "auto_merge_enabled"],
    ["pull_request_review", "edited"],
    ["check_run", "requested_action"],
    ["issues", "constructor"],
  ])("github %s, action %s", (event, action) => {
    const body = encodeJson({ action });
    expect(parseDelivery("github", githubHeaders(event, body), body).result).toEqual({
      kind: "ignored",
      reason: `${event} action ${action} is not used`,
    });
  });
});

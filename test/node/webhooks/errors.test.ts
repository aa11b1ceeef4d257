import { describe, expect, it } from "vitest";
import type { Forge } from "../../../src/forge/webhooks/events.ts";
import { parseDelivery, WebhookError } from "../../../src/forge/webhooks/parse.ts";
import { FIXTURE_CASES } from "../../support/webhook-fixtures.ts";
import {
  encodeJson,
  type FixtureJson,
  forgejoHeaders,
  giteaHeaders,
  githubHeaders,
  headersFor,
  readFixture,
  readFixtureJson,
} from "./deliveries.ts";

/** The WebhookError `run` throws (fails the test if it throws nothing or something else). */
function webhookError(run: () => unknown): WebhookError {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookError) return error;
    throw error;
  }
  throw new Error("expected a WebhookError");
}

const encode = (text: string) => new TextEncoder().encode(text);

describe("malformed bodies → WebhookError 400", () => {
  it.each(Object.entries(FIXTURE_CASES))("%s truncated", async (path, { delivery }) => {
    const body = await readFixture(path);
    const truncated = body.subarray(0, Math.floor(body.length / 2));
    const error = webhookError(() =>
      parseDelivery(delivery.forge, headersFor(delivery, truncated), truncated),
    );
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^malformed JSON body: /);
    expect(error.message).not.toContain("\n");
  });

  it.each([
    ["empty", new Uint8Array(), /^malformed JSON body: /],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0x7d]), /^malformed JSON body: /],
    ["an array", encode("[]"), /^malformed JSON body: expected an object$/],
    ["null", encode("null"), /^malformed JSON body: expected an object$/],
    ["a string", encode('"push"'), /^malformed JSON body: expected an object$/],
  ])("%s", (_, body, message) => {
    const error = webhookError(() => parseDelivery("github", githubHeaders("push", body), body));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(message);
  });
});

describe("payloads without the fields Conveyor uses → WebhookError 400 naming the field", () => {
  async function errorFor(
    forge: Forge,
    event: string,
    path: string,
    mutate: (json: FixtureJson) => void,
  ): Promise<WebhookError> {
    const json = await readFixtureJson(path);
    mutate(json);
    const body = encodeJson(json);
    const headers =
      forge === "github" ? githubHeaders(event, body) : giteaHeaders({ grouped: event, type: event }, body);
    return webhookError(() => parseDelivery(forge, headers, body));
  }

  it.each<[string, Forge, string, string, (json: FixtureJson) => void, string]>([
    [
      "GitHub PR without head sha",
      "github",
      "pull_request",
      "github/pull_request.opened.json",
      (json) => delete json.pull_request.head.sha,
      "pull_request payload: pull_request.head.sha: expected string, received undefined",
    ],
    [
      "Gitea PR without its number",
      "gitea",
      "pull_request",
      "gitea/pull_request.opened.json",
      (json) => delete json.number,
      "pull_request payload: number: expected number, received undefined",
    ],
    [
      "issue with an unknown state",
      "github",
      "issues",
      "github/issues.opened.json",
      (json) => {
        json.issue.state = "archived";
      },
      'issues payload: issue.state: Invalid option: expected one of "open"|"closed"',
    ],
    [
      "label without a name",
      "gitea",
      "pull_request_sync",
      "gitea/pull_request.synchronized.json",
      (json) => delete json.pull_request.labels[1].name,
      "pull_request_sync payload: pull_request.labels.1.name: expected string, received undefined",
    ],
    [
      "no action at all",
      "github",
      "issues",
      "github/issues.opened.json",
      (json) => delete json.action,
      "issues payload: action: expected string, received undefined",
    ],
    [
      "several problems",
      "github",
      "check_run",
      "github/check_run.completed.failure.json",
      (json) => {
        delete json.check_run.head_sha;
        delete json.check_run.name;
        delete json.repository;
      },
      "check_run payload: repository: expected object, received undefined (+2 more)",
    ],
    [
      "status with an unknown state",
      "github",
      "status",
      "github/status.json",
      (json) => {
        json.state = "warning";
      },
      'status payload: state: Invalid option: expected one of "pending"|"success"|"failure"|"error"',
    ],
  ])("%s", async (_, forge, event, path, mutate, message) => {
    const error = await errorFor(forge, event, path, mutate);
    expect(error.status).toBe(400);
    expect(error.message).toBe(message);
  });
});

describe("missing headers → WebhookError 400", () => {
  const body = encode("{}");

  it.each<[Forge, Headers, string]>([
    ["github", githubHeaders("push", body, { deliveryId: "" }), "missing X-GitHub-Delivery header"],
    [
      "gitea",
      (() => {
        const headers = giteaHeaders({ grouped: "push", type: "push" }, body);
        headers.delete("X-Gitea-Delivery");
        return headers;
      })(),
      "missing X-Gitea-Delivery header",
    ],
    [
      "forgejo",
      (() => {
        const headers = forgejoHeaders({ grouped: "push", type: "push" }, body);
        headers.delete("X-Forgejo-Delivery");
        headers.delete("X-Gitea-Delivery");
        return headers;
      })(),
      "missing X-Forgejo-Delivery / X-Gitea-Delivery header",
    ],
    ["github", githubHeaders("", body), "missing X-GitHub-Event header"],
    [
      "gitea",
      giteaHeaders({ grouped: "", type: "" }, body),
      "missing X-Gitea-Event-Type / X-Gitea-Event header",
    ],
    [
      "forgejo",
      forgejoHeaders({ grouped: " ", type: "" }, body),
      "missing X-Forgejo-Event-Type / X-Gitea-Event-Type / X-Forgejo-Event / X-Gitea-Event header",
    ],
  ])("%s: %s", (forge, headers, message) => {
    const error = webhookError(() => parseDelivery(forge, headers, body));
    expect(error.status).toBe(400);
    expect(error.message).toBe(message);
  });

  it("prefers the X-Forgejo-* delivery id and event type over the Gitea copies", () => {
    const headers = forgejoHeaders({ grouped: "push", type: "push" }, body, { deliveryId: "gitea-id" });
    headers.set("X-Forgejo-Delivery", "forgejo-id");
    headers.set("X-Forgejo-Event-Type", "create");
    expect(parseDelivery("forgejo", headers, body)).toEqual({
      deliveryId: "forgejo-id",
      eventName: "create",
      result: { kind: "ignored", reason: "event create is not used" },
    });
  });
});

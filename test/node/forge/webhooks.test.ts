import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ForgeClient, Plain } from "../../../src/forge/client/index.ts";
import { parseDelivery } from "../../../src/forge/webhooks/parse.ts";
import { verifySignature } from "../../../src/forge/webhooks/signature.ts";
import type { LocalForge } from "../../support/forge/index.ts";
import { api, Checkout, clientFor, type Received, startForge, startReceiver } from "./harness.ts";

const REPO = "acme/hooks";
const SECRET = "conveyor webhook secret";

// Forgejo's header set (services/webhook/deliver.go): its own, then Gitea's, Gogs' and GitHub's copies.
const FORGE_HEADERS = [
  "x-forgejo-delivery",
  "x-forgejo-event",
  "x-forgejo-event-type",
  "x-forgejo-signature",
  "x-gitea-delivery",
  "x-gitea-event",
  "x-gitea-event-type",
  "x-gitea-signature",
  "x-github-delivery",
  "x-github-event",
  "x-github-event-type",
  "x-gogs-delivery",
  "x-gogs-event",
  "x-gogs-event-type",
  "x-gogs-signature",
  "x-hub-signature",
  "x-hub-signature-256",
];

let forge: LocalForge;
let cleanup: () => Promise<void>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let conveyor: ForgeClient<Plain>;
let alice: ForgeClient<Plain>;
let aliceToken: string;
let checkout: Checkout;

beforeAll(async () => {
  const started = await startForge({ ci: { enabled: false } });
  ({ forge, cleanup } = started);
  await forge.createRepo({ owner: "acme", name: "hooks", seed: { files: { "README.md": "hooks\n" } } });
  const conveyorToken = forge.createUser("conveyor").token;
  aliceToken = forge.createUser("alice").token;
  forge.addCollaborator(REPO, "conveyor", "admin");
  forge.addCollaborator(REPO, "alice", "write");
  conveyor = clientFor(forge, conveyorToken, REPO);
  alice = clientFor(forge, aliceToken, REPO);
  checkout = await Checkout.clone(forge.cloneUrl(REPO, aliceToken), `${started.workDir}/hooks`);
  receiver = await startReceiver();
  await conveyor.createWebhook({
    url: receiver.url,
    secret: SECRET,
    events: ["issues", "issue_comment", "pull_request", "pull_request_review", "push"],
  });
});

afterAll(async () => {
  await cleanup();
  await receiver.close();
});

function text(delivery: Received): string {
  return new TextDecoder().decode(delivery.body);
}

/** What the production Worker does with a delivery: verify the signature, then parse and normalize. */
async function parse(delivery: Received) {
  const signature = await verifySignature("forgejo", delivery.headers, delivery.body, SECRET);
  return { signature, parsed: parseDelivery("forgejo", delivery.headers, delivery.body) };
}

describe("webhooks delivered like Forgejo", () => {
  it("every action's delivery verifies and parses into the normalized event Conveyor expects", async () => {
    const origin = { forge: "forgejo", repository: REPO };
    const issueEvent = (action: string, sender: string, issue: object) => ({
      kind: "event",
      event: { type: "issue", action, ...origin, sender, issue, label: null },
    });
    const pullEvent = (action: string, sender: string, pullRequest: object) => ({
      kind: "event",
      event: { type: "pull_request", action, ...origin, sender, pullRequest },
    });
    const reviewEvent = (state: string, body: string, headSha: string) => ({
      kind: "event",
      event: {
        type: "review",
        ...origin,
        sender: "alice",
        review: { state, body, author: "alice", headSha },
      },
    });
    const ignoredPush = { kind: "ignored", reason: "event push is not used" };

    const { number } = await conveyor.createIssue({
      title: "Hooked",
      body: "Body <b>&</b>",
      labels: ["backlog"],
    });
    await api(forge, aliceToken, "PATCH", `/repos/${REPO}/issues/${number}`, { title: "Hooked!" });
    await conveyor.addLabels(number, ["in-progress"]);
    await api(forge, aliceToken, "DELETE", `/repos/${REPO}/issues/${number}/labels`);
    await conveyor.closeIssue(number);
    await api(forge, aliceToken, "PATCH", `/repos/${REPO}/issues/${number}`, { state: "open" });
    const issueComment = await alice.comment(number, "/conveyor retry");
    const firstHead = await checkout.commitAndPush(`conveyor/${number}-hooked`, { "hooked.txt": "1\n" });
    const pull = await conveyor.createPullRequest({
      head: `conveyor/${number}-hooked`,
      base: "main",
      title: "Hook it",
      body: `Fixes #${number}`,
    });
    const pullComment = await alice.comment(pull.number, "Looks close");
    const secondHead = await checkout.commitAndPush(`conveyor/${number}-hooked`, { "hooked.txt": "2\n" });
    await alice.createReview(pull.number, { event: "APPROVE", body: "LGTM" });
    await alice.createReview(pull.number, { event: "REQUEST_CHANGES", body: "One more thing" });
    await alice.createReview(pull.number, { event: "COMMENT", body: "Just a note" });
    await api(forge, aliceToken, "POST", `/repos/${REPO}/statuses/${secondHead}`, {
      state: "success",
      context: "ci",
    });
    await conveyor.mergePullRequest(pull.number, { method: "merge" });
    await checkout.commitAndPush("dropped", { "dropped.txt": "d\n" });
    const dropped = await conveyor.createPullRequest({
      head: "dropped",
      base: "main",
      title: "Dropped",
      body: "",
    });
    await conveyor.updatePullRequest(dropped.number, { state: "closed" });
    await forge.settled();

    const issue = { number, title: "Hooked!", body: "Body <b>&</b>", author: "conveyor" };
    const pullRequest = {
      number: pull.number,
      title: "Hook it",
      headRef: `conveyor/${number}-hooked`,
      baseRef: "main",
      author: "conveyor",
      headRepository: REPO,
    };
    const expected: [string, object][] = [
      [
        "issues",
        issueEvent("opened", "conveyor", { ...issue, title: "Hooked", labels: ["backlog"], state: "open" }),
      ],
      ["issues", issueEvent("edited", "alice", { ...issue, labels: ["backlog"] })],
      [
        "issue_label",
        issueEvent("labels_updated", "conveyor", { ...issue, labels: ["backlog", "in-progress"] }),
      ],
      ["issue_label", issueEvent("labels_updated", "alice", { ...issue, labels: [] })],
      ["issues", issueEvent("closed", "conveyor", { ...issue, state: "closed" })],
      ["issues", issueEvent("reopened", "alice", { ...issue, state: "open" })],
      [
        "issue_comment",
        {
          kind: "event",
          event: {
            type: "comment",
            action: "created",
            ...origin,
            sender: "alice",
            comment: {
              issueNumber: number,
              isPullRequest: false,
              commentId: issueComment.id,
              body: "/conveyor retry",
              author: "alice",
            },
          },
        },
      ],
      ["push", ignoredPush],
      [
        "pull_request",
        pullEvent("opened", "conveyor", { ...pullRequest, headSha: firstHead, merged: false }),
      ],
      [
        "pull_request_comment",
        {
          kind: "event",
          event: {
            type: "comment",
            sender: "alice",
            comment: { issueNumber: pull.number, isPullRequest: true, commentId: pullComment.id },
          },
        },
      ],
      ["push", ignoredPush],
      ["pull_request_sync", pullEvent("synchronized", "alice", { ...pullRequest, headSha: secondHead })],
      ["pull_request_review_approved", reviewEvent("approved", "LGTM", secondHead)],
      ["pull_request_review_rejected", reviewEvent("changes_requested", "One more thing", secondHead)],
      ["pull_request_review_comment", reviewEvent("commented", "Just a note", secondHead)],
      ["push", ignoredPush],
      [
        "pull_request",
        pullEvent("merged", "conveyor", { ...pullRequest, headSha: secondHead, merged: true }),
      ],
      ["issues", issueEvent("closed", "conveyor", { ...issue, state: "closed" })],
      ["push", ignoredPush],
      ["pull_request", pullEvent("opened", "conveyor", { number: dropped.number, headRef: "dropped" })],
      ["pull_request", pullEvent("closed", "conveyor", { number: dropped.number, merged: false })],
    ];

    const pushes = receiver.received.filter((delivery) => delivery.headers.get("x-forgejo-event") === "push");
    expect(JSON.parse(text(pushes[0] as Received))).toMatchObject({
      ref: `refs/heads/conveyor/${number}-hooked`,
      before: "0".repeat(40),
      after: firstHead,
      total_commits: 1,
      commits: [{ id: firstHead, message: `change conveyor/${number}-hooked\n`, added: ["hooked.txt"] }],
      pusher: { login: "alice" },
    });
    expect(JSON.parse(text(pushes[1] as Received))).toMatchObject({
      before: firstHead,
      after: secondHead,
      compare_url: `${forge.url}/${REPO}/compare/${firstHead}...${secondHead}`,
      commits: [{ id: secondHead, modified: ["hooked.txt"] }],
    });

    const results = await Promise.all(receiver.received.map(parse));
    expect(results.map(({ parsed }) => parsed.eventName)).toEqual(expected.map(([name]) => name));
    for (const [i, { signature, parsed }] of results.entries()) {
      expect(signature).toEqual({ ok: true, header: "X-Forgejo-Signature" });
      expect(parsed.result).toMatchObject(expected[i]?.[1] ?? {});
    }
  });

  it("sends Forgejo's headers, signs the exact pretty-printed bytes and records every delivery", async () => {
    const recorded = forge.deliveries();
    expect(recorded.length).toBe(receiver.received.length);

    for (const [i, delivery] of receiver.received.entries()) {
      const names = [...delivery.headers.keys()].filter((name) => name.startsWith("x-")).sort();
      expect(names).toEqual(FORGE_HEADERS);
      const id = delivery.headers.get("x-forgejo-delivery") ?? "";
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      for (const name of ["x-gitea-delivery", "x-gogs-delivery", "x-github-delivery"]) {
        expect(delivery.headers.get(name)).toBe(id);
      }
      const hex = createHmac("sha256", SECRET).update(delivery.body).digest("hex");
      for (const name of ["x-forgejo-signature", "x-gitea-signature", "x-gogs-signature"]) {
        expect(delivery.headers.get(name)).toBe(hex);
      }
      expect(delivery.headers.get("x-hub-signature-256")).toBe(`sha256=${hex}`);
      expect(delivery.headers.get("x-hub-signature")).toBe(
        `sha1=${createHmac("sha1", SECRET).update(delivery.body).digest("hex")}`,
      );
      expect(delivery.headers.get("content-type")).toBe("application/json");
      expect(text(delivery)).toMatch(/^\{\n {2}"/);
      expect(recorded[i]).toMatchObject({
        id,
        status: 200,
        responseBody: "ok",
        error: null,
        redeliveryOf: null,
      });
    }
    // Go's encoder escapes <, > and & inside strings.
    expect(text(receiver.received[0] as Received)).toContain('"Body \\u003cb\\u003e\\u0026\\u003c/b\\u003e"');
    const events = receiver.received.map((delivery) => [
      delivery.headers.get("x-forgejo-event"),
      delivery.headers.get("x-forgejo-event-type"),
    ]);
    expect(events).toContainEqual(["issue_comment", "pull_request_comment"]);
    expect(events).toContainEqual(["pull_request_approved", "pull_request_review_approved"]);
    expect(events).toContainEqual(["issues", "issue_label"]);
  });

  it("redeliver re-sends the same bytes under a new delivery id", async () => {
    const original = forge.deliveries()[0];
    if (!original) throw new Error("no delivery recorded");
    const before = receiver.received.length;

    const replay = await forge.redeliver(original.id);

    const received = receiver.received[before] as Received;
    expect(receiver.received).toHaveLength(before + 1);
    expect(replay).toMatchObject({
      redeliveryOf: original.id,
      status: 200,
      event: "issues",
      eventType: "issues",
    });
    expect(replay.id).not.toBe(original.id);
    expect(received.headers.get("x-forgejo-delivery")).toBe(replay.id);
    expect(text(received)).toBe(original.body);
    const { signature, parsed } = await parse(received);
    expect(signature.ok).toBe(true);
    expect(parsed.deliveryId).toBe(replay.id);
    expect(parsed.result).toMatchObject({ kind: "event", event: { type: "issue", action: "opened" } });
  });
});

describe("delivery without a secret, to a receiver that never answers", () => {
  it("does not hold up the API, gives up after the timeout, sends empty signatures and does not retry", async () => {
    const hanging = await startReceiver(() => "hang");
    const { forge: local, cleanup: stop } = await startForge({
      webhookTimeoutMs: 300,
      ci: { enabled: false },
    });
    try {
      await local.createRepo({ owner: "acme", name: "quiet" });
      const client = clientFor(local, local.admin.token, "acme/quiet");
      await api(local, local.admin.token, "POST", "/repos/acme/quiet/hooks", {
        type: "gitea",
        active: true,
        events: ["issues"],
        config: { url: hanging.url, content_type: "json" },
      });

      const started = performance.now();
      const { number } = await client.createIssue({ title: "Quiet", body: "", labels: [] });
      await client.comment(number, "also delivered: `issues` covers issue comments");
      const answered = performance.now() - started;
      await local.settled();

      expect(answered).toBeLessThan(300);
      expect(hanging.received).toHaveLength(2);
      const first = hanging.received[0] as Received;
      expect(first.headers.get("x-forgejo-signature")).toBe("");
      expect(first.headers.get("x-hub-signature-256")).toBe("sha256=");
      expect(await verifySignature("forgejo", first.headers, first.body, SECRET)).toEqual({
        ok: false,
        reason: "missing",
        header: null,
      });
      const [delivery] = local.deliveries();
      expect(delivery).toMatchObject({ status: null, error: expect.stringContaining("TimeoutError") });
      expect(delivery?.durationMs).toBeGreaterThanOrEqual(290);
    } finally {
      await stop();
      await hanging.close();
    }
  });
});

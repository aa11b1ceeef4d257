import { env, SELF } from "cloudflare:test";
import { inject } from "vitest";
import { type Delivery, headersFor, type Signatures } from "../../support/webhook-headers.ts";

export const OPERATOR = { authorization: `Bearer ${env.CONVEYOR_ADMIN_TOKEN}` };
export const WEBHOOK_SECRET = "conveyor test webhook secret";

let counter = 0;
/** D1 and Durable Object storage are shared across tests: each test gets its own project. */
export const freshProject = (name: string) => `${name}-${Date.now().toString(36)}-${counter++}`;

/**
 * A test project's settings: `extra`, its effects retried from 50 ms (`effects.retryBaseMs`) and its polls at
 * most 1 s apart (`effects.pollMaxMs`) unless it says otherwise. The local forge answers at once, and its CI
 * (polled on Forgejo) settles in seconds: a poll grown to the default 20 s would wait out most of a test.
 */
export function testSettings(extra: object): object {
  const { effects } = extra as { effects?: object };
  return { ...extra, effects: { retryBaseMs: 50, pollMaxMs: 1_000, ...effects } };
}

export async function registerProject(
  id: string,
  forge: Delivery["forge"],
  repo: string,
  extra: object = {},
) {
  const res = await SELF.fetch(`https://conveyor.test/api/v1/projects/${id}`, {
    method: "PUT",
    headers: { ...OPERATOR, "content-type": "application/json" },
    body: JSON.stringify({
      forge,
      // The local forge knows none of these repositories: forge effects fail fast (404) and wait in the outbox.
      apiUrl: inject("services").forgeApiUrl,
      repo,
      webhookSecret: WEBHOOK_SECRET,
      forgeToken: "forge-token-for-tests",
      ...testSettings(extra),
    }),
  });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`register: ${res.status} ${await res.text()}`);
}

async function hmac(algorithm: "SHA-1" | "SHA-256", secret: string, body: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: algorithm },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, body));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sign(secret: string | null, body: Uint8Array): Promise<Signatures> {
  if (secret === null) return null;
  return { sha1: await hmac("SHA-1", secret, body), sha256: await hmac("SHA-256", secret, body) };
}

export type DeliverOptions = {
  secret?: string | null;
  deliveryId?: string;
  headers?: Record<string, string>;
  /** Sent as a stream in 64 KiB chunks, without a Content-Length, as a chunked upload arrives. */
  streamed?: boolean;
};

export async function deliver(
  project: string,
  delivery: Delivery,
  body: Uint8Array,
  options: DeliverOptions = {},
) {
  const { secret = WEBHOOK_SECRET, deliveryId = crypto.randomUUID() } = options;
  const headers = headersFor(delivery, await sign(secret, body), deliveryId);
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
  const sent = options.streamed ? chunked(body) : body;
  return SELF.fetch(`https://conveyor.test/hooks/${project}`, { method: "POST", headers, body: sent });
}

function chunked(body: Uint8Array): ReadableStream<Uint8Array> {
  const size = 64 * 1024;
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < body.length; at += size) controller.enqueue(body.slice(at, at + size));
      controller.close();
    },
  });
}

export const fixtureBytes = (path: string) => {
  const text = env.WEBHOOK_FIXTURES[path];
  if (text === undefined) throw new Error(`no fixture ${path}`);
  return new TextEncoder().encode(text);
};

export const pretty = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2));

const PULL = JSON.parse(env.WEBHOOK_FIXTURES["gitea/pull_request.opened.json"] ?? "{}");

/**
 * A Forgejo pull request event as the forge sends it, from the fixture: `author` opened the pull request,
 * `sender` caused this event (the author unless said); `head` is the branch and the repository it comes from
 * (the fixture's unless said), `body` its description (likewise).
 */
export function pullRequestDelivery(
  loop: { project: string; repo: string },
  action: string,
  pull: {
    number: number;
    author: string;
    sender?: string;
    body?: string;
    head?: { ref: string; repo: string };
  },
) {
  const person = (login: string) => ({ ...PULL.pull_request.user, login, username: login });
  const head = pull.head
    ? { ...PULL.pull_request.head, ref: pull.head.ref, repo: { full_name: pull.head.repo } }
    : PULL.pull_request.head;
  return deliver(
    loop.project,
    { forge: "forgejo", event: { grouped: "pull_request", type: "pull_request" } },
    pretty({
      ...PULL,
      action,
      number: pull.number,
      pull_request: {
        ...PULL.pull_request,
        number: pull.number,
        ...(pull.body !== undefined && { body: pull.body }),
        head,
        user: person(pull.author),
        merged: false,
      },
      repository: { ...PULL.repository, full_name: loop.repo },
      sender: person(pull.sender ?? pull.author),
    }),
  );
}

const comments = JSON.parse(env.WEBHOOK_FIXTURES["gitea/issue_comment.created.json"] ?? "{}");

export const COMMENT = {
  forge: "forgejo",
  event: { grouped: "issue_comment", type: "issue_comment" },
} as const;

/** An issue comment's payload as the forge sends it; `onPull`: on pull request `number`. */
export function commentPayload(
  loop: { repo: string },
  number: number,
  author: string,
  body: string,
  onPull = false,
) {
  const user = { ...comments.comment.user, login: author, username: author };
  return pretty({
    ...comments,
    is_pull: onPull,
    issue: { ...comments.issue, number, pull_request: onPull ? { merged: false } : null },
    comment: { ...comments.comment, id: Math.floor(Math.random() * 1e9), body, user },
    repository: { ...comments.repository, full_name: loop.repo },
    sender: user,
  });
}

/** An issue comment as the forge delivers it; `onPull`: on pull request `number`. */
export const commentDelivery = (
  loop: { project: string; repo: string },
  number: number,
  author: string,
  body: string,
  onPull = false,
) =>
  deliver(
    loop.project,
    onPull
      ? { forge: "forgejo", event: { grouped: "issue_comment", type: "pull_request_comment" } }
      : COMMENT,
    commentPayload(loop, number, author, body, onPull),
  );

const CLOSED = JSON.parse(env.WEBHOOK_FIXTURES["gitea/issues.closed.json"] ?? "{}");

/** Forgejo's webhook of issue `number` closed (by hand, or by a merged pull request's "Closes #n"). */
export const issueClosedDelivery = (loop: { project: string; repo: string }, number: number) =>
  deliver(
    loop.project,
    { forge: "forgejo", event: { grouped: "issues", type: "issues" } },
    pretty({
      ...CLOSED,
      issue: { ...CLOSED.issue, number, state: "closed", labels: [] },
      repository: { ...CLOSED.repository, full_name: loop.repo },
    }),
  );

const REVIEWS = {
  approved: "pull_request_review.approved.json",
  rejected: "pull_request_review.rejected.json",
  comment: "pull_request_review.comment.json",
} as const;

/**
 * Forgejo's webhook of a review submitted on pull request `pull`, from Gitea's captured payloads: the event
 * type carries the verdict and the sender is the reviewer, as the forge sends them.
 */
export function reviewDelivery(
  loop: { project: string; repo: string },
  pull: number,
  review: { kind: keyof typeof REVIEWS; by: string; body: string; headSha: string },
) {
  const fixture = JSON.parse(env.WEBHOOK_FIXTURES[`gitea/${REVIEWS[review.kind]}`] ?? "{}");
  const type = `pull_request_review_${review.kind}`;
  const user = { ...fixture.sender, login: review.by, username: review.by };
  return deliver(
    loop.project,
    { forge: "forgejo", event: { grouped: fixture.review.type.replace("_review", ""), type } },
    pretty({
      ...fixture,
      number: pull,
      pull_request: {
        ...fixture.pull_request,
        number: pull,
        head: { ...fixture.pull_request.head, sha: review.headSha },
      },
      repository: { ...fixture.repository, full_name: loop.repo },
      sender: user,
      review: { type, content: review.body },
    }),
  );
}

/** GitHub's `pull_request_review` webhook (`submitted`), from octokit's example: the review, by id and state. */
export function githubReviewDelivery(
  loop: { project: string; repo: string },
  pull: number,
  review: { id: number; state: "approved" | "changes_requested" | "commented"; by: string; body: string },
) {
  const fixture = JSON.parse(env.WEBHOOK_FIXTURES["github/pull_request_review.submitted.json"] ?? "{}");
  const user = { ...fixture.review.user, login: review.by };
  return deliver(
    loop.project,
    { forge: "github", event: "pull_request_review" },
    pretty({
      ...fixture,
      review: { ...fixture.review, id: review.id, state: review.state, body: review.body, user },
      pull_request: { ...fixture.pull_request, number: pull },
      repository: { ...fixture.repository, full_name: loop.repo },
      sender: user,
    }),
  );
}

/**
 * People's reviews on Conveyor's pull request (docs/operating.md#people-on-the-pull-request): what a review
 * says, with the lines it points at, goes to the issue as `pr_review`; the lifecycle obeys a writer's and
 * records anyone else's for the issue's page. A writer's approval of a merge held for a human is the approval
 * it waits for. Conveyor's own reviews are never a person's.
 *
 * A review is heard once whichever way it comes: its webhook, or a reconciliation cycle that read it from the
 * forge (src/reconcile/reviews.ts). Both send it under an id of the review's own (`reviewEventId`).
 */
import {
  type LineComment,
  MAX_FEEDBACK_CHARS,
  type ReviewVerdict,
  reviewText,
} from "../domain/human-review.ts";
import { sameLogin } from "../domain/logins.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { ReviewEvent } from "../forge/webhooks/events.ts";
import { conveyorAccount } from "../projects/account.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { issueOfPull, lifecycleStates } from "../projects/mirror.ts";
import { forgeClientFor, type Project } from "../projects/store.ts";
import { canCommand } from "./route-comment.ts";
import type { Routed } from "./route-event.ts";

/** Of one review, the comments on lines a session is shown. */
const MAX_LINE_COMMENTS = 50;

/** A person's review as its webhook tells of it or the forge lists it; `headSha` null: the forge named none. */
export type HeardReview = Omit<ReviewEvent["review"], "headSha"> & { headSha: string | null };

/**
 * The lifecycle event's id for one review in one verdict: the same from its webhook and from a cycle, so the
 * later of the two changes nothing. A dismissal is the review's own second word, under its own id.
 */
export const reviewEventId = (review: { pullNumber: number; state: ReviewVerdict }, id: number) =>
  `review:${review.pullNumber}:${id}:${review.state}`;

export async function routeReview(
  env: Env,
  project: Project,
  event: ReviewEvent,
  key: string,
  cause: Cause,
): Promise<Routed> {
  const { pullNumber } = event.review;
  const number = await issueOfPull(env, project.id, pullNumber);
  const state = number === null ? undefined : (await lifecycleStates(env, project.id, [number])).get(number);
  if (number === null || state === undefined) {
    return { kind: "ignored", reason: `pull request #${pullNumber} is no issue's` };
  }
  const forge = await forgeClientFor(env, project);
  return hearReview(env, project, forge, event.review, { number, state }, cause, key);
}

/**
 * Sends what one review means to the issue in `state`. Gitea's and Forgejo's webhooks name no review: it is
 * read from the forge (`namedReview`); one not found goes under `key`.
 */
export async function hearReview(
  env: Env,
  project: Project,
  forge: ForgeClient,
  review: HeardReview,
  issue: { number: number; state: string },
  cause: Cause,
  key: string,
): Promise<Routed> {
  const { state: verdict, author, headSha, body } = review;
  // Conveyor's account (a writer) is never a person, whatever the forge lets it approve.
  if (sameLogin(author, await conveyorAccount(env, project))) {
    return { kind: "ignored", reason: "Conveyor's own review is no person's word" };
  }
  const reviewId = review.reviewId ?? (await namedReview(forge, review));
  const id = reviewId === null ? key : reviewEventId(review, reviewId);
  // A dismissal is the forge's own word that a writer (whoever dismissed) lifted the review: obeyed.
  const writer = verdict === "dismissed" || (await canCommand(forge, author));
  if (verdict === "approved" && issue.state === "awaiting_approval" && writer) {
    const approval = { type: "human_approval" as const, by: author, ...(headSha && { headSha }) };
    return heard(await sendEvent(env, project, issue.number, `${id}:approval`, cause, approval), id);
  }
  const lines = verdict === "dismissed" || reviewId === null ? [] : await linesOf(forge, review, reviewId);
  const round =
    verdict === "changes_requested" ||
    lines.length > 0 ||
    (verdict === "commented" && project.settings.humanComments === "new_round");
  const event = {
    type: "pr_review" as const,
    by: author,
    verdict,
    text: reviewText(author, verdict, body, lines).slice(0, MAX_FEEDBACK_CHARS),
    writer,
    round,
    lines: lines.length,
  };
  return heard(await sendEvent(env, project, issue.number, `${id}:review`, cause, event), id);
}

/** A review the issue already heard (its webhook's copy after a cycle read it, or again) changes nothing. */
const heard = (result: { duplicate: boolean }, id: string): Routed =>
  result.duplicate ? { kind: "ignored", reason: `${id} was already heard` } : { kind: "routed", events: 1 };

/** The review's comments on lines, with the hunk each points into. */
async function linesOf(forge: ForgeClient, review: HeardReview, id: number): Promise<LineComment[]> {
  const comments = await forge.listReviewComments(review.pullNumber, id);
  return comments
    .slice(0, MAX_LINE_COMMENTS)
    .map((c) => ({ path: c.path, line: c.line, hunk: c.diffHunk, body: c.body }));
}

/**
 * The review a Gitea or Forgejo webhook tells of: the reviewer's latest of its verdict whose text is the
 * webhook's (two in quick succession are told apart), else their latest of its verdict.
 */
async function namedReview(forge: ForgeClient, review: HeardReview): Promise<number | null> {
  const theirs = (await forge.listReviews(review.pullNumber)).filter(
    (r) => sameLogin(r.author, review.author) && r.state === review.state,
  );
  const said = theirs.filter((r) => r.body.trim() === review.body.trim());
  const latest = (reviews: typeof theirs) =>
    reviews.reduce<number | null>((max, r) => (max === null || r.id > max ? r.id : max), null);
  return latest(said) ?? latest(theirs);
}

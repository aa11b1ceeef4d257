/**
 * People's reviews on Conveyor's pull request (docs/operating.md#people-on-the-pull-request): what a review
 * says, with the lines it points at, goes to the issue as `pr_review`; the lifecycle obeys a writer's and
 * records anyone else's for the issue's page. A writer's approval of a merge held for a human is the approval
 * it waits for. Conveyor's own reviews are never a person's.
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

export async function routeReview(
  env: Env,
  project: Project,
  event: ReviewEvent,
  key: string,
  cause: Cause,
): Promise<Routed> {
  const { pullNumber, state: verdict, author, headSha, body } = event.review;
  const number = await issueOfPull(env, project.id, pullNumber);
  const state = number === null ? undefined : (await lifecycleStates(env, project.id, [number])).get(number);
  if (number === null || state === undefined) {
    return { kind: "ignored", reason: `pull request #${pullNumber} is no issue's` };
  }
  // Conveyor's account (a writer) is never a person, whatever the forge lets it approve.
  if (sameLogin(author, await conveyorAccount(env, project))) {
    return { kind: "ignored", reason: "Conveyor's own review is no person's word" };
  }
  const forge = await forgeClientFor(env, project);
  // A dismissal is the forge's own word that a writer (whoever dismissed) lifted the review: obeyed.
  const writer = verdict === "dismissed" || (await canCommand(forge, author));
  if (verdict === "approved" && state === "awaiting_approval" && writer) {
    const approval = { type: "human_approval" as const, by: author, headSha };
    await sendEvent(env, project, number, `${key}:approval`, cause, approval);
    return { kind: "routed", events: 1 };
  }
  const lines = verdict === "dismissed" ? [] : await linesOf(forge, event.review);
  const round =
    verdict === "changes_requested" ||
    lines.length > 0 ||
    (verdict === "commented" && project.settings.humanComments === "new_round");
  await sendEvent(env, project, number, `${key}:review`, cause, {
    type: "pr_review",
    by: author,
    verdict,
    text: reviewText(author, verdict, body, lines).slice(0, MAX_FEEDBACK_CHARS),
    writer,
    round,
    lines: lines.length,
  });
  return { kind: "routed", events: 1 };
}

/**
 * The review's comments on lines, with the hunk each points into. Gitea's and Forgejo's review webhooks name
 * no review: it is the reviewer's latest submitted one of the verdict the webhook carries.
 */
async function linesOf(forge: ForgeClient, review: ReviewEvent["review"]): Promise<LineComment[]> {
  const id = review.reviewId ?? (await latestReview(forge, review.pullNumber, review.author, review.state));
  if (id === null) return [];
  const comments = await forge.listReviewComments(review.pullNumber, id);
  return comments
    .slice(0, MAX_LINE_COMMENTS)
    .map((c) => ({ path: c.path, line: c.line, hunk: c.diffHunk, body: c.body }));
}

async function latestReview(
  forge: ForgeClient,
  pull: number,
  author: string,
  verdict: ReviewVerdict,
): Promise<number | null> {
  const theirs = (await forge.listReviews(pull)).filter(
    (r) => sameLogin(r.author, author) && r.state === verdict,
  );
  return theirs.reduce<number | null>(
    (latest, r) => (latest === null || r.id > latest ? r.id : latest),
    null,
  );
}

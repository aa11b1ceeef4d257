import { z } from "zod";
import { ApiError, json, parseBody, type Reply } from "../http.ts";
import type { Review, ReviewState } from "../state.ts";
import type { HookEventType } from "../webhooks/events.ts";
import { pullPayload } from "../webhooks/payloads.ts";
import { pullParam, type RepoContext } from "./context.ts";

const createReviewOption = z.object({
  event: z.string().optional(),
  body: z.string().optional(),
  commit_id: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
  comments: z
    .array(z.object({ path: z.string(), body: z.string(), new_position: z.number().int().optional() }))
    .optional(),
});

const EVENTS: Partial<Record<ReviewState, HookEventType>> = {
  APPROVED: "pull_request_review_approved",
  REQUEST_CHANGES: "pull_request_review_rejected",
  COMMENT: "pull_request_review_comment",
};

export function listReviews(ctx: RepoContext): Reply {
  const issue = pullParam(ctx);
  const reviews = issue.pull.reviews.map((review) => ctx.forge.render.review(ctx.repo, issue, review));
  return json(200, reviews, { "X-Total-Count": String(reviews.length) });
}

/**
 * Gitea's rules: nobody approves or rejects their own pull request (422), REQUEST_CHANGES and COMMENT need a
 * body or a comment (422), a closed one takes no verdict (422); any other event is a PENDING review, which
 * sends no webhook. A submitted review sends `pull_request_review_*` with action `reviewed`.
 */
export function submitReview(ctx: RepoContext): Reply {
  const issue = pullParam(ctx);
  const input = parseBody(createReviewOption, ctx.body);
  const { forge, repo, doer } = ctx;
  const state: ReviewState =
    input.event === "APPROVED" || input.event === "REQUEST_CHANGES" || input.event === "COMMENT"
      ? input.event
      : "PENDING";
  const body = input.body ?? "";
  const comments = input.comments ?? [];
  const own = issue.posterId === doer.id;
  if (state === "APPROVED" && own) throw new ApiError(422, "approve your own pull is not allowed");
  if (state === "REQUEST_CHANGES" && own) throw new ApiError(422, "reject your own pull is not allowed");
  if ((state === "REQUEST_CHANGES" || state === "COMMENT") && body.trim() === "" && comments.length === 0) {
    throw new ApiError(422, `review event ${state} requires a body`);
  }
  if ((state === "APPROVED" || state === "REQUEST_CHANGES") && issue.state === "closed") {
    throw new ApiError(422, "can't submit review for a closed or merged PR");
  }
  const review: Review = {
    id: forge.store.nextId(),
    reviewerId: doer.id,
    state,
    body,
    commitId: input.commit_id || issue.pull.headSha,
    submittedAt: forge.store.now(),
    comments: comments.map((comment) => ({
      id: forge.store.nextId(),
      path: comment.path,
      line: comment.new_position ?? 0,
      body: comment.body,
    })),
  };
  issue.pull.reviews.push(review);
  const type = EVENTS[state];
  if (type) {
    const payload = pullPayload(forge.render, repo, issue, "reviewed", doer, {
      review: { type, content: body },
    });
    forge.hooks.emit(repo, type, payload);
  }
  return json(200, forge.render.review(repo, issue, review));
}

import { z } from "zod";
import { gitDir } from "../forge.ts";
import { cutHunk } from "../git/hunk.ts";
import { diff } from "../git/log.ts";
import { ApiError, json, notFound, parseBody, type Reply } from "../http.ts";
import type { Issue, Pull, Review, ReviewState } from "../state.ts";
import type { HookEventType } from "../webhooks/events.ts";
import { pullPayload } from "../webhooks/payloads.ts";
import { intParam, pullParam, type RepoContext } from "./context.ts";
import { reviewCommentOf, reviewOf } from "./dialect.ts";

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
  const reviews = issue.pull.reviews.map((review) => reviewOf(ctx, issue, review));
  return json(200, reviews, { "X-Total-Count": String(reviews.length) });
}

/**
 * Gitea's rules: nobody approves or rejects their own pull request (422), REQUEST_CHANGES and COMMENT need a
 * body or a comment (422), a closed one takes no verdict (422); any other event is a PENDING review, which
 * sends no webhook. A submitted review sends `pull_request_review_*` with action `reviewed`.
 */
export async function submitReview(ctx: RepoContext): Promise<Reply> {
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
  // Each comment keeps the hunk it points into as the diff reads now, as Gitea stores it with the comment.
  const changes =
    comments.length > 0
      ? await diff(gitDir(forge.reposDir, repo), issue.pull.mergeBase, issue.pull.headSha, false)
      : "";
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
      hunk: comment.new_position ? cutHunk(changes, comment.path, comment.new_position) : "",
    })),
    dismissed: false,
  };
  issue.pull.reviews.push(review);
  // Gitea stamps the issue with a submitted review's comment (`CreateComment` updates `updated_unix`).
  if (state !== "PENDING") issue.updatedAt = review.submittedAt;
  const type = EVENTS[state];
  if (type) {
    const payload = pullPayload(forge.render, repo, issue, "reviewed", doer, {
      review: { type, content: body },
    });
    forge.hooks.emit(repo, type, payload);
  }
  return json(200, forge.render.review(repo, issue, review));
}

function reviewParam(ctx: RepoContext): { issue: Issue & { pull: Pull }; review: Review } {
  const issue = pullParam(ctx);
  const review = issue.pull.reviews.find((candidate) => candidate.id === intParam(ctx, "id"));
  if (!review) throw notFound(`pull review does not exist [id: ${ctx.params.id}]`);
  return { issue, review };
}

/** `GET /pulls/{index}/reviews/{id}/comments`: the review's comments on lines, each with its hunk. */
export function listReviewComments(ctx: RepoContext): Reply {
  const { issue, review } = reviewParam(ctx);
  const comments = review.comments.map((c) => reviewCommentOf(ctx, issue, review, c));
  return json(200, comments);
}

const dismissOption = z.object({ message: z.string().optional(), priors: z.boolean().optional() });

/**
 * `POST /pulls/{index}/reviews/{id}/dismissals`, as Gitea's API has it: repository admins only, approvals and
 * change requests only, open pull requests only (each refusal a 403). The review keeps its state and is marked
 * dismissed; the pull request is stamped updated (Gitea records the dismissal as a comment, which updates the
 * issue's `updated_unix`); no webhook is sent (Gitea's webhook notifier has none for it).
 */
export function dismissReview(ctx: RepoContext): Reply {
  parseBody(dismissOption, ctx.body ?? {});
  if (ctx.mode !== "admin" && ctx.mode !== "owner") throw new ApiError(403, "Must be repo admin");
  const { issue, review } = reviewParam(ctx);
  if (review.state !== "APPROVED" && review.state !== "REQUEST_CHANGES") {
    throw new ApiError(
      403,
      "not need to dismiss this review because it's type is not Approve or change request",
    );
  }
  if (issue.state === "closed") {
    throw new ApiError(403, "not need to dismiss this review because this pr is closed");
  }
  review.dismissed = true;
  issue.updatedAt = ctx.forge.store.now();
  return json(200, ctx.forge.render.review(ctx.repo, issue, review));
}

import { z } from "zod";
import { json, parseBody, type Reply } from "../http.ts";
import type { Comment } from "../state.ts";
import { commentPayload } from "../webhooks/payloads.ts";
import { issueParam, type RepoContext } from "./context.ts";
import { commentOf } from "./dialect.ts";

const createCommentOption = z.object({ body: z.string().trim().min(1) });

/** Every comment, oldest first: Gitea's comment list has no pages. */
export function listComments(ctx: RepoContext): Reply {
  const issue = issueParam(ctx);
  const comments = issue.comments.map((comment) => commentOf(ctx, issue, comment));
  return json(200, comments, { "X-Total-Count": String(comments.length) });
}

/** Sends `issue_comment`, or `pull_request_comment` on a pull request (both grouped as issue_comment). */
export function createComment(ctx: RepoContext): Reply {
  const issue = issueParam(ctx);
  const { body } = parseBody(createCommentOption, ctx.body);
  const { forge, repo, doer } = ctx;
  const now = forge.store.now();
  const comment: Comment = {
    id: forge.store.nextId(),
    posterId: doer.id,
    body,
    createdAt: now,
    updatedAt: now,
  };
  issue.comments.push(comment);
  issue.updatedAt = now;
  const type = issue.pull ? "pull_request_comment" : "issue_comment";
  forge.hooks.emit(repo, type, commentPayload(forge.render, repo, issue, comment, doer));
  return json(201, commentOf(ctx, issue, comment));
}

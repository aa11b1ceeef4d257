/** The shape each answer takes for the client that asked: Gitea's, or GitHub's (`X-GitHub-Api-Version`). */
import type { Comment, Issue, Label, Pull, Review } from "../state.ts";
import type { RepoContext } from "./context.ts";

export const issueOf = (ctx: RepoContext, issue: Issue) =>
  ctx.dialect === "github"
    ? ctx.forge.github.issue(ctx.repo, issue)
    : ctx.forge.render.issue(ctx.repo, issue);

export const commentOf = (ctx: RepoContext, issue: Issue, comment: Comment) =>
  ctx.dialect === "github"
    ? ctx.forge.github.comment(ctx.repo, issue, comment)
    : ctx.forge.render.comment(ctx.repo, issue, comment);

export const labelOf = (ctx: RepoContext, label: Label) =>
  ctx.dialect === "github"
    ? ctx.forge.github.label(ctx.repo, label)
    : ctx.forge.render.label(ctx.repo, label);

/** One pull request; `mergeable` is what a read says while the forge re-checks it (see `checking`). */
export const pullOf = (ctx: RepoContext, issue: Issue & { pull: Pull }, mergeable = issue.pull.mergeable) =>
  ctx.dialect === "github"
    ? ctx.forge.github.pull(ctx.repo, issue, mergeable)
    : { ...ctx.forge.render.pull(ctx.repo, issue, ctx.mode), mergeable };

/** A pull request in a list: GitHub lists the shorter shape; Gitea lists the full one. */
export const listedPullOf = (ctx: RepoContext, issue: Issue & { pull: Pull }) =>
  ctx.dialect === "github" ? ctx.forge.github.pullSimple(ctx.repo, issue) : pullOf(ctx, issue);

export const reviewOf = (ctx: RepoContext, issue: Issue, review: Review) =>
  ctx.dialect === "github"
    ? ctx.forge.github.review(ctx.repo, issue, review)
    : ctx.forge.render.review(ctx.repo, issue, review);

export const reviewCommentOf = (
  ctx: RepoContext,
  issue: Issue,
  review: Review,
  comment: Review["comments"][number],
) =>
  ctx.dialect === "github"
    ? ctx.forge.github.reviewComment(ctx.repo, issue, review, comment)
    : ctx.forge.render.reviewComment(ctx.repo, issue, review, comment);

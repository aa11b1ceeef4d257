/**
 * Lifecycle effects on the forge: labels, comments, the pull request, closing the issue, and waking the
 * issues that depend on this one. Each is idempotent under its effect key, since the outbox retries.
 */
import { checkHead } from "../../../src/ci/gate.ts";
import { issueBranch } from "../../../src/domain/branch.ts";
import type { Effect, LabelRole } from "../../../src/domain/lifecycle.ts";
import type { ForgeClient } from "../../../src/forge/client/index.ts";
import { hasStatus } from "../../../src/forge/client/index.ts";
import { commentOnce, type Poster, policyOn } from "../../../src/forge/comment-once.ts";
import { ESCALATION_HEADLINE, ESCALATION_REMINDER } from "../../../src/forge/escalation-notice.ts";
import { composePost, type Piece, type PostBody, postTitle } from "../../../src/forge/post/post.ts";
import { postPolicy } from "../../../src/forge/post/project-policy.ts";
import { pullRequestBody } from "../../../src/forge/pull-request-body.ts";
import { projectStub } from "../../../src/project-stub.ts";
import { conveyorPoster } from "../../../src/projects/account.ts";
import { regateDependents } from "../../../src/projects/dispatch.ts";
import { mirroredIssues, setMirroredState } from "../../../src/projects/mirror.ts";
import { pullRequestStory } from "../../../src/projects/pull-request-story.ts";
import {
  clientOf,
  lazyForges,
  loadProject,
  loadRegistered,
  type Project,
} from "../../../src/projects/store.ts";
import type { Deliverers, EffectContext } from "./deliverers.ts";

export async function forgeOf(ctx: EffectContext): Promise<{ project: Project; forge: ForgeClient }> {
  const registered = await loadRegistered(ctx.env, ctx.issue.project);
  if (!registered) throw new Error(`project ${ctx.issue.project} is not registered`);
  return {
    project: registered.project,
    forge: clientOf(ctx.env, registered.project, await registered.secrets()),
  };
}

/** The project's forge, and Conveyor as the poster of its own comments there. */
export async function posterOf(ctx: EffectContext): Promise<{ project: Project; poster: Poster }> {
  const { project, forge } = await forgeOf(ctx);
  return { project, poster: await conveyorPoster(ctx.env, project, forge) };
}

const LABEL_SETTING = {
  backlog: "backlog",
  in_progress: "inProgress",
  blocked: "blocked",
  needs_human: "needsHuman",
  underspecified: "underspecified",
} as const satisfies Record<LabelRole, string>;

const labelName = (project: Project, role: LabelRole) => project.settings.labels[LABEL_SETTING[role]];

/**
 * The escalation notice: the reason quoted apart (it may hold a session's, the critic's or a person's words),
 * then Conveyor's own account of the issue and what a human can do.
 */
async function escalationText(
  ctx: EffectContext,
  poster: Poster,
  effect: Extract<Effect, { kind: "notify_human" }>,
): Promise<PostBody> {
  const { issue } = ctx;
  // From the ProjectDO's own record of every usage report: the D1 copy the dashboard reads can lag the report
  // that just escalated the issue (a spent budget) by a moment.
  const cost = await projectStub(ctx.env, issue.project).issueSpendUsd(issue.number);
  const lead = effect.reminder
    ? `${ESCALATION_REMINDER} Nobody has answered yet. The reason, as recorded:`
    : `${ESCALATION_HEADLINE} The reason, as recorded:`;
  const status = [
    `- state: \`${issue.state}\``,
    `- branch: ${issue.branch ? `\`${issue.branch}\`` : "none yet"}`,
    `- iteration: ${issue.iteration}`,
    `- cost so far: $${cost.toFixed(2)}`,
    "",
    // A held merge or an action's step is not resumed by a reply: it waits for its vault item's decision.
    issue.state === "awaiting_approval"
      ? issue.kind === "action"
        ? stepApprovalHowTo(issue.vaultItem, issue.vaultStep ?? "?")
        : approvalHowTo(issue.vaultItem)
      : "Reply here to resume the session with your answer, or comment `/conveyor retry` or `/conveyor abandon`.",
  ].join("\n");
  const policy = await policyOn(poster, issue.number);
  return composePost(policy, [{ quote: effect.reason, by: lead }, { conveyor: status }]);
}

/** How a writer decides a held merge; unanswered, its vault item expires and the issue is abandoned. */
const approvalHowTo = (item: string | null) =>
  item
    ? `Approve the pull request (a review by a user with write access) or comment \`/conveyor approve ${item}\` to merge it; \`/conveyor reject ${item} <reason>\` to refuse. Unanswered, vault item ${item} expires and the issue is abandoned.`
    : "Approve the pull request (a review by a user with write access) to merge it, or comment `/conveyor abandon`.";

/** How a writer decides an action's dangerous step; unanswered, its vault item expires and the action stops. */
const stepApprovalHowTo = (item: string | null, step: string) =>
  item
    ? `Comment \`/conveyor approve ${item}\` to run step ${step}, or \`/conveyor reject ${item} <reason>\` to stop the action. Unanswered, vault item ${item} expires and the action stops.`
    : `Step ${step} waits for the vault to hold it; its item's id follows.`;

export const FORGE_DELIVERERS: Deliverers = {
  labels: async (effect, ctx) => {
    const { project, forge } = await forgeOf(ctx);
    const n = ctx.issue.number;
    if (effect.add.length > 0)
      await forge.addLabels(
        n,
        effect.add.map((role) => labelName(project, role)),
      );
    for (const role of effect.remove) await forge.removeLabel(n, labelName(project, role));
    return undefined;
  },
  comment: async (effect, ctx) => {
    const { poster } = await posterOf(ctx);
    const thread = effect.thread ?? ctx.issue.number;
    const policy = await policyOn(poster, thread);
    // The lifecycle's words may carry text it did not write (a session's reason, a person's): defused whole.
    const pieces: Piece[] = [{ mixed: effect.body }];
    if (effect.quote) pieces.push({ quote: effect.quote.text, by: `${effect.quote.by} wrote:` });
    const mentions = effect.to ? [...policy.mentions, effect.to] : policy.mentions;
    await commentOnce(poster, thread, ctx.key, composePost({ ...policy, mentions }, pieces));
    return undefined;
  },
  notify_human: async (effect, ctx) => {
    const { poster } = await posterOf(ctx);
    await commentOnce(poster, ctx.issue.number, ctx.key, await escalationText(ctx, poster, effect));
    return undefined;
  },
  open_pull_request: async (_effect, ctx) => {
    const { project, forge } = await forgeOf(ctx);
    const { number, headSha, state } = ctx.issue;
    // Opened for the head the runner reported, as the forge has it; a session already at work again (a late
    // delivery) may have moved the branch, and the gates after it check the head again.
    const waiting = state === "awaiting_ci" || state === "awaiting_review";
    const moved = waiting && headSha ? await checkHead(forge, number, headSha) : null;
    if (moved) return moved;
    const branch = issueBranch(number);
    const [mirrored, story] = await Promise.all([
      mirroredIssues(ctx.env, project.id, [number]).then(([issue]) => issue),
      pullRequestStory(ctx.env, project.id, { number, branch, summary: ctx.issue.summary }),
    ]);
    const base = project.settings.defaultBranch;
    try {
      const pr = await forge.createPullRequest({
        head: branch,
        base,
        title: postTitle(postPolicy(project), mirrored?.title ?? `Issue #${number}`),
        body: pullRequestBody(story, postPolicy(project)),
      });
      return { type: "pr_opened", number: pr.number, byConveyor: true };
    } catch (error) {
      if (!hasStatus(error, 409, 422)) throw error;
      // "Already exists" (a retry after a lost answer, or a pull request opened by hand from the issue's
      // branch) is one reading of the refusal; "no commits between", a missing head are others. Only an open
      // pull request from the branch is adopted; otherwise the refusal stands (a 422 with a reason is final).
      const open = await forge.findOpenPullRequest(branch, base);
      if (open) return { type: "pr_opened", number: open.number, byConveyor: true };
      throw error;
    }
  },
  describe_pull_request: async (_effect, ctx) => {
    const { number, prNumber, summary } = ctx.issue;
    // Not linked yet: the pull request is opened with the same description.
    if (prNumber === null) return undefined;
    const { project, forge } = await forgeOf(ctx);
    const story = await pullRequestStory(ctx.env, project.id, {
      number,
      branch: issueBranch(number),
      summary,
    });
    await forge.updatePullRequest(prNumber, { body: pullRequestBody(story, postPolicy(project)) });
    return undefined;
  },
  close_issue: async (_effect, ctx) => {
    const { forge } = await forgeOf(ctx);
    await forge.closeIssue(ctx.issue.number);
    return undefined;
  },
  delete_branch: async (_effect, ctx) => {
    const { project, forge } = await forgeOf(ctx);
    if (project.settings.keepBranches) return undefined;
    await forge.deleteBranch(issueBranch(ctx.issue.number));
    return undefined;
  },
  notify_dependents: async (_effect, ctx) => {
    const project = await loadProject(ctx.env, ctx.issue.project);
    if (!project) throw new Error(`project ${ctx.issue.project} is not registered`);
    // Conveyor closed the issue itself (close_issue precedes this effect): dependents need not wait for the webhook.
    await setMirroredState(ctx.env, project.id, ctx.issue.number, "closed");
    const cause = { kind: "system" as const, id: ctx.key };
    await regateDependents(ctx.env, project, ctx.issue.number, ctx.key, cause, lazyForges(ctx.env, project));
    return undefined;
  },
};

/**
 * The review loop's effects: watching CI, the critic's review, and the merge. Each returns what it learned
 * as a lifecycle event, recorded with its acknowledgement.
 */

import { queueReviewRun } from "../../../src/agents/review-run.ts";
import { readCi } from "../../../src/ci/gate.ts";
import { readHeadMove } from "../../../src/ci/head-move.ts";
import { applyCriticReport, WORKER_CRITIC } from "../../../src/critic/apply.ts";
import { runCritic } from "../../../src/critic/critic.ts";
import { criticLedger, savedReport } from "../../../src/critic/ledger.ts";
import { standingChangeRequests } from "../../../src/domain/human-review.ts";
import { judgedIssue } from "../../../src/domain/judged-brief.ts";
import type { LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import { sameLogin } from "../../../src/domain/logins.ts";
import { mergeMethod } from "../../../src/domain/merge-rules.ts";
import { refusalHold } from "../../../src/forge/approval-hold.ts";
import type { ForgeClient } from "../../../src/forge/client/index.ts";
import { mergeCommitMessage } from "../../../src/forge/post/commit-message.ts";
import { canCommand } from "../../../src/hooks/route-comment.ts";
import { projectStub } from "../../../src/project-stub.ts";
import { conveyorAccount } from "../../../src/projects/account.ts";
import { mirroredIssues } from "../../../src/projects/mirror.ts";
import type { Project } from "../../../src/projects/store.ts";
import type { Deliverers, EffectContext } from "./deliverers.ts";
import { forgeOf, posterOf } from "./forge.ts";
import {
  confirmMergeTurn,
  holdMergeTurn,
  MergeTurnPending,
  updatesBeforeItsReview,
  waitsForMergeTurn,
} from "./merge-queue.ts";
import { mergeConfirmed, readMerged } from "./merged.ts";
import { keepCurrent } from "./stay-current.ts";
import { updateRefusedAsBehind, upToDateRule } from "./up-to-date.ts";

export const DEFAULT_CRITIC_MODEL = "claude-sonnet-5-5";

/** Thrown while CI runs: the outbox polls again (`effects.pollMaxMs` apart at most), which is the schedule. */
export class CiPending extends Error {
  /** Not a failure: polled again for as long as the CI timer lets the issue wait. */
  readonly waiting = true;
}

export const REVIEW_DELIVERERS: Deliverers = {
  watch_ci: async (effect, ctx) => {
    const { issue } = ctx;
    // Held to awaiting_ci at its head (effect-basis.ts): a webhook reporting first or a new push ends it.
    if (!issue.headSha) return undefined;
    const { project, forge } = await forgeOf(ctx);
    // Read once on every forge: CI may have settled before the issue waited for it, its webhook unheard.
    const result = await readCi(ctx.env, project, forge, issue.number, issue.headSha);
    // The red result a re-run answers, read before the re-run shows: CI still runs.
    const rerunning =
      result?.type === "ci" && effect.after !== undefined && result.fingerprint === effect.after;
    if (result && !rerunning) return result;
    // Gitea and GitHub push CI results as webhooks; only Forgejo has none to send, so only Forgejo is polled.
    if (project.forge !== "forgejo") return undefined;
    throw new CiPending(`CI pending for ${issue.headSha}`);
  },

  request_review: async (_effect, ctx) => {
    const { issue, env } = ctx;
    if (issue.prNumber === null) throw new Error("the pull request's number is not known yet");
    const { project, poster } = await posterOf(ctx);
    const { forge } = poster;
    // The critic reviews the commit CI passed, and only while the branch is still there; a branch the forge
    // updated from the base for an earlier attempt, which died before recording it, goes through CI again.
    const base = project.settings.defaultBranch;
    const moved = issue.headSha && (await readHeadMove(forge, issue.number, issue.headSha, base));
    if (moved) return moved;
    // A head in conflict with the base, or behind it, is brought up to date first; the critic reviews that one.
    // Behind only where `merge.upToDate` asks (./up-to-date.ts), and not while other merges are queued: its own
    // turn will update it (./merge-queue.ts).
    const gate = { mayUpdate: () => updatesBeforeItsReview(ctx), rule: upToDateRule(forge, project) };
    const stale = issue.headSha && (await keepCurrent(forge, issue.prNumber, issue.headSha, gate));
    if (stale) return stale;
    // On a runner: the reviewer agent's run is queued, and its review is applied when its runner completes
    // it (../../project/agents/review-runs.ts); the issue waits in awaiting_review, bounded by its review timer.
    if (project.settings.critic.runsOn === "runner")
      return queueReviewRun(env, project, forge, { issue, prNumber: issue.prNumber, key: ctx.key });
    // Delivered again (an attempt that failed after the critic answered): its saved report, not a paid call.
    const saved = await savedReport(env, ctx.key);
    const result = saved
      ? { ok: true as const, report: saved }
      : await askCritic(ctx, project, forge, issue.prNumber);
    if (!result.ok) return { type: "review_failed", reason: result.reason };
    const target = {
      key: ctx.key,
      number: issue.number,
      prNumber: issue.prNumber,
      headSha: issue.headSha,
      by: WORKER_CRITIC,
    };
    return applyCriticReport(env, poster, project, target, result.report);
  },

  merge: async (_effect, ctx) => {
    const { issue } = ctx;
    const prNumber = issue.prNumber;
    if (prNumber === null) throw new Error("the pull request's number is not known yet");
    const { forge, project: registered } = await forgeOf(ctx);
    // The issue holds the project's merge turn from here through its update's CI and review to its merge, and
    // no other merge lands on the base meanwhile; it gives the turn up when it leaves the merge path
    // (./merge-queue.ts). Only while the issue still merges the head it reviewed (effect-basis.ts).
    const turn = await holdMergeTurn(ctx, registered);
    // Each write (the update, the merge) only while that turn is still the issue's.
    const underTurn = () => confirmMergeTurn(ctx, registered, turn);
    // The base may have moved since the review: up to date first, and the new head is reviewed again.
    if (issue.headSha) {
      // An update of an earlier attempt that died before recording it: reviewed again, not merged stale.
      // Anything else moving the head is the forge's to refuse (the merge pins the head).
      const base = registered.settings.defaultBranch;
      const moved = await readHeadMove(forge, issue.number, issue.headSha, base);
      if (moved?.type === "branch_updated") return moved;
      const stale = await keepCurrent(forge, prNumber, issue.headSha, {
        mayUpdate: underTurn,
        rule: upToDateRule(forge, registered),
      });
      if (stale) return stale;
    }
    const holds = await heldBy(ctx, registered, forge, prNumber);
    if (holds.length > 0) return { type: "merge_held", holds };
    return await mergeByRules(ctx, registered, forge, prNumber, underTurn);
  },

  check_merged: async (_effect, ctx) => {
    const { issue } = ctx;
    // The merge's answer already ended the lifecycle (the usual case), or an operator did.
    if (issue.state === "merged" || issue.state === "abandoned") return undefined;
    // The pull request being opened (its answer, in the forge lane, still on the way) may be the one merged.
    if (issue.prNumber === null) throw new Error("the pull request's number is not known yet");
    return mergedOr(ctx, issue.prNumber, { type: "issue_closed", unmerged: true });
  },

  // Held to merging at its head (effect-basis.ts): a merge's answer that came after all ended it.
  check_merge: async (_effect, ctx) => {
    const pr = ctx.issue.prNumber;
    // Like the merge itself: nothing to ask about before the forge's number is known (retried, bounded).
    if (pr === null) throw new Error("the pull request's number is not known yet");
    // Waiting for the merge turn is no merge gone unanswered: asked again later, bounded by the queue.
    const waiting = await waitsForMergeTurn(ctx, (await forgeOf(ctx)).project);
    if (waiting) throw new MergeTurnPending(waiting);
    return mergedOr(ctx, pr, {
      type: "merge_failed",
      reason: "the pull request was not merged within the merge timeout",
    });
  },
};

/** The critic's review of the issue's pull request at its head, through the Messages API. */
async function askCritic(ctx: EffectContext, project: Project, forge: ForgeClient, pr: number) {
  const { env, issue } = ctx;
  const apiKey = env.ANTHROPIC_API_KEY;
  if (!apiKey) throw new Error("ANTHROPIC_API_KEY is not configured: the critic cannot run");
  const [mirrored] = await mirroredIssues(env, project.id, [issue.number]);
  const { judged, current } = judgedIssue(issue.brief, mirrored ?? null);
  const diff = await forge.getPullRequestDiff(pr);
  const model = env.CRITIC_MODEL ?? DEFAULT_CRITIC_MODEL;
  const result = await runCritic(
    {
      apiKey,
      model,
      ...(env.ANTHROPIC_BASE_URL && { baseURL: env.ANTHROPIC_BASE_URL }),
    },
    {
      repo: project.repo,
      issue: { number: issue.number, ...judged },
      current,
      diff,
      ci: project.settings.ci.kind === "none" ? "no CI configured" : `green on ${issue.headSha}`,
      ledger: await criticLedger(env, project.id, issue.number),
    },
  );
  // Paid whatever it answered: the issue's spend and the day's, like a session's (src/usage/sources.ts).
  const { number, iteration } = issue;
  const call = { id: `critic:${ctx.key}`, number, iteration, source: "critic", model } as const;
  await projectStub(env, project.id).recordModelUsage({ ...call, tokens: result.usage });
  return result;
}

/**
 * The merge as the repository's rules have it: the method `merge.method` picks among those it allows, the
 * message Conveyor's own (src/forge/post/commit-message.ts), sent once `underTurn` confirmed the merge turn
 * is still the issue's. A refusal of a head behind its base updates it, under the same turn (./up-to-date.ts);
 * for want of approvals it waits for a person (merge_needs_approval); any other fails.
 */
async function mergeByRules(
  ctx: EffectContext,
  project: Project,
  forge: ForgeClient,
  prNumber: number,
  underTurn: () => Promise<true>,
): Promise<LifecycleEvent> {
  const { issue, env } = ctx;
  const chosen = mergeMethod(project.settings.merge.method, await forge.getMergeMethods());
  if ("refused" in chosen) return { type: "merge_failed", reason: chosen.refused };
  // The title a writer queued; without one (queued before briefs were kept), the mirror's, else the forge's.
  const title =
    issue.brief?.title ??
    (await mirroredIssues(env, project.id, [issue.number]))[0]?.title ??
    (await forge.getIssue(issue.number)).title;
  const commit = mergeCommitMessage({ number: issue.number, title }, prNumber);
  await underTurn();
  const result = await forge.mergePullRequest(prNumber, {
    method: chosen.method,
    ...commit,
    ...(issue.headSha && { sha: issue.headSha }),
  });
  // Merging is idempotent: a retry after a lost answer finds the pull request already merged.
  if (result.merged) return mergeConfirmed(prNumber, issue.headSha);
  const behind = await updateRefusedAsBehind(forge, prNumber, issue.headSha, result.reason, underTurn);
  if (behind) return behind;
  const target = {
    prNumber,
    headSha: issue.headSha,
    author: await conveyorAccount(env, project),
    branch: project.settings.defaultBranch,
  };
  const held = await refusalHold(forge, target, result.reason);
  return held
    ? { type: "merge_needs_approval", reason: held }
    : { type: "merge_failed", reason: result.reason };
}

/**
 * Writers' change requests standing on the pull request: each holds the merge for its reviewer
 * (src/domain/human-review.ts). Anyone else's is shown, not obeyed.
 */
async function heldBy(ctx: EffectContext, project: Project, forge: ForgeClient, pr: number) {
  const own = await conveyorAccount(ctx.env, project);
  const isOwn = (login: string) => sameLogin(login, own);
  const standing = standingChangeRequests(await forge.listReviews(pr), isOwn, ctx.issue.overridden);
  const writers = await Promise.all(standing.map((hold) => canCommand(forge, hold.by)));
  return standing.filter((_, i) => writers[i]);
}

/** Whether the issue's pull request `pr` is merged, as the forge says: merge_confirmed, or `unmerged`. */
async function mergedOr(ctx: EffectContext, pr: number, unmerged: LifecycleEvent): Promise<LifecycleEvent> {
  const { forge } = await forgeOf(ctx);
  return (await readMerged(forge, pr)) ?? unmerged;
}

/**
 * The critic on a runner: a run of the `reviewer` agent (the built-in, or the repository's override) for one
 * pull request at one head sha, with the pull request, its issue, the critic's earlier rounds and the diff as
 * context files. Queued by the issue's `request_review` (where the project's critic runs on a runner) or by a
 * person's pull request (where the project opts in). Its `submit_review` is applied by the Worker
 * (durable-objects/project/agents/review-runs.ts), which trusts none of it but the report: the head is checked on the forge.
 */
import { criticLedger } from "../critic/ledger.ts";
import { CURRENT_TEXT_NOTE, judgedIssue } from "../domain/judged-brief.ts";
import type { Brief, LifecycleEvent } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { ForgeClient, PullRequest } from "../forge/client/index.ts";
import { projectStub } from "../project-stub.ts";
import { mirroredIssues } from "../projects/mirror.ts";
import type { Project } from "../projects/store.ts";
import { MAX_REVIEW_CONTEXT, MAX_REVIEW_DIFF, type ReviewCheckout } from "../runner-api/contract.ts";
import type { Catalog } from "./catalog.ts";
import type { AgentDefinition } from "./definition.ts";
import { agentRunRequest, catalogOf, eventRunId } from "./runs.ts";

export const REVIEWER = "reviewer";

/**
 * What the Worker keeps of a review run to apply its review: the issue it decides (null: a person's pull
 * request, which gets a forge review only), the pull request, the head reviewed, and the key its review is
 * posted and kept under.
 */
export type ReviewBinding = { number: number | null; pr: number; headSha: string; key: string };

/** A review run's part of its request: what the Worker keeps, and what the runner checks out. */
export type ReviewRun = { binding: ReviewBinding; checkout: ReviewCheckout };

/** The catalog's reviewer, when it is enabled and its definition parses. */
export const reviewerOf = (catalog: Catalog): AgentDefinition | undefined =>
  catalog.agents.find((agent) => agent.name === REVIEWER && agent.enabled);

/**
 * `request_review` on a runner: queues the reviewer's run for the issue's pull request at the head CI passed,
 * once per request (the run's id derives from the effect's key). Nothing comes back to the issue now; a
 * reviewer that is disabled, or whose definition does not parse, fails the review at once.
 */
export async function queueReviewRun(
  env: Env,
  project: Project,
  forge: ForgeClient,
  request: {
    issue: { number: number; headSha: string | null; brief: Brief | null };
    prNumber: number;
    key: string;
  },
): Promise<LifecycleEvent | undefined> {
  const { issue, prNumber, key } = request;
  if (!issue.headSha) throw new Error("the head CI passed is not known yet");
  const headSha = issue.headSha;
  const reviewer = reviewerOf(await catalogOf(forge, project));
  if (!reviewer) {
    const reason = `the ${REVIEWER} agent is disabled, or its definition in the repository does not parse`;
    return { type: "review_failed", reason, headSha };
  }
  // Conveyor's mirror of the forge, or the forge itself for an issue the mirror has not seen yet.
  const [mirrored] = await mirroredIssues(env, project.id, [issue.number]);
  const now = mirrored ?? (await forge.getIssue(issue.number));
  // The brief a writer queued is what the change is judged against; the text now, if edited, is context.
  const { judged, queuedBy, current } = judgedIssue(issue.brief, now);
  const context = {
    pullRequest: {
      number: prNumber,
      head: headSha,
      base: project.settings.defaultBranch,
      author: "conveyor",
    },
    issue: { number: issue.number, ...judged, ...(queuedBy && { queuedBy }) },
    ...(current && { currentIssueText: { note: CURRENT_TEXT_NOTE, ...current } }),
    earlierRounds: await criticLedger(env, project.id, issue.number),
  };
  const runId = await eventRunId(project.id, `review\n${key}`, reviewer.name);
  const review: ReviewRun = {
    binding: { number: issue.number, pr: prNumber, headSha, key },
    checkout: await checkoutOf(forge, prNumber, `refs/heads/conveyor/${issue.number}`, headSha, context),
  };
  const trigger = `review of #${prNumber} at ${headSha.slice(0, 12)}`;
  await projectStub(env, project.id).startAgentRun(
    await agentRunRequest(env, project, reviewer, trigger, { runId }, review),
  );
  return undefined;
}

/** A person's pull request, reviewed at its head (as `pull` read it, else read now), through its pull ref. */
export async function humanReview(
  forge: ForgeClient,
  runId: string,
  subject: { number: number; title: string; body: string; author: string },
  read?: PullRequest,
): Promise<ReviewRun> {
  const pull = read ?? (await forge.getPullRequest(subject.number));
  const context = {
    pullRequest: { ...subject, head: pull.headSha, base: pull.baseRef },
  };
  return {
    binding: { number: null, pr: subject.number, headSha: pull.headSha, key: runId },
    checkout: await checkoutOf(
      forge,
      subject.number,
      `refs/pull/${subject.number}/head`,
      pull.headSha,
      context,
    ),
  };
}

async function checkoutOf(
  forge: ForgeClient,
  pr: number,
  ref: string,
  headSha: string,
  context: object,
): Promise<ReviewCheckout> {
  const diff = await forge.getPullRequestDiff(pr);
  const cut =
    diff.length > MAX_REVIEW_DIFF
      ? `${diff.slice(0, MAX_REVIEW_DIFF - 200)}\n\n[diff cut here: run git diff origin/<base>...HEAD for the rest]\n`
      : diff;
  const text = JSON.stringify(context, null, 2);
  // Past the bound (a long ledger), the earlier rounds are left out rather than the run refused.
  const pullRequest =
    text.length <= MAX_REVIEW_CONTEXT
      ? text
      : JSON.stringify({ ...context, earlierRounds: "left out: too long" }).slice(0, MAX_REVIEW_CONTEXT);
  return { pr, ref, headSha, pullRequest, diff: cut };
}

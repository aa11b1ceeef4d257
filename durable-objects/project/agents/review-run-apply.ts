/**
 * Applying a reviewer run's `submit_review`. The review is a runner's claim: the Worker re-reads what it
 * trusts from the forge and the issue — the pull request's head is still the commit reviewed (else the review
 * is stale and dropped: the new head gets its own review once its CI passes), the protected paths from the
 * forge's file listing — and then applies the report as the Worker critic's own (src/critic/apply.ts): the
 * ledger, tech debt, the review on the forge once, and the issue's `review` event, deduplicated by the run.
 * A person's pull request gets the review on the forge only, as a comment review (never an approval).
 */
import type { RequestedOutput } from "../../../src/agents/outputs.ts";
import type { ReviewBinding } from "../../../src/agents/review-run.ts";
import { applyCriticReport, postReview } from "../../../src/critic/apply.ts";
import { type CriticReport, decide } from "../../../src/critic/report.ts";
import type { Env } from "../../../src/env.ts";
import type { Poster } from "../../../src/forge/comment-once.ts";
import { issueStub } from "../../../src/issue-stub.ts";
import type { Project } from "../../../src/projects/store.ts";
import { reviewAnswerId } from "./review-runs.ts";

/** Null once applied; the reason it was dropped otherwise (stale). Throws for the outbox to retry. */
export async function applyReviewRun(
  env: Env,
  poster: Poster,
  project: Project,
  runId: string,
  binding: ReviewBinding,
  output: Extract<RequestedOutput, { type: "submit_review" }>,
): Promise<string | null> {
  const { forge } = poster;
  const report: CriticReport = {
    verdict: output.verdict,
    summary: output.summary,
    findings: output.findings,
  };
  const pull = await forge.getPullRequest(binding.pr);
  if (pull.headSha !== binding.headSha)
    return `stale: the pull request's head is ${pull.headSha}, not the reviewed ${binding.headSha}`;
  const by = `The agent \`reviewer\` (run \`${runId}\`)`;
  if (binding.number === null) {
    await postReview(poster, { prNumber: binding.pr, key: binding.key, by }, report, decide(report).verdict, {
      advisory: true,
    });
    return null;
  }
  const issue = issueStub(env, project.id, binding.number);
  const now = await issue.view();
  if (now?.state !== "awaiting_review" || now.headSha !== binding.headSha)
    return `stale: the issue is ${now?.state ?? "unknown"} at ${now?.headSha ?? "no head"}, not awaiting the review of ${binding.headSha}`;
  const target = {
    key: binding.key,
    number: binding.number,
    prNumber: binding.pr,
    headSha: binding.headSha,
    by,
  };
  const event = await applyCriticReport(env, poster, project, target, report);
  // The issue refuses it if it moved on meanwhile (the head sha is part of the event), and hears it once.
  await issue.apply({
    id: reviewAnswerId(runId),
    project: project.id,
    number: binding.number,
    cause: { kind: "job", id: runId },
    event: { ...event, headSha: binding.headSha },
  });
  return null;
}

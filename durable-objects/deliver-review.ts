/**
 * The review loop's effects: watching CI, the critic's review, and the merge. Each returns what it learned
 * as a lifecycle event, recorded with its acknowledgement.
 */
import { checkHead, readCi } from "../src/ci/gate.ts";
import { runCritic } from "../src/critic/critic.ts";
import { criticLedger, saveReport } from "../src/critic/ledger.ts";
import { type CriticReport, decide, type Finding, findingsText } from "../src/critic/report.ts";
import { commentMarker } from "../src/crypto/markers.ts";
import type { LifecycleEvent } from "../src/domain/lifecycle.ts";
import { sameLogin } from "../src/domain/logins.ts";
import { approvalReason, type FileListing } from "../src/domain/protected-paths.ts";
import type { ForgeClient } from "../src/forge/client/index.ts";
import { hasStatus } from "../src/forge/client/index.ts";
import { type Poster, reviewOnce } from "../src/forge/comment-once.ts";
import { projectStub } from "../src/project-stub.ts";
import { mirroredIssues } from "../src/projects/mirror.ts";
import type { Project } from "../src/projects/store.ts";
import { forgeOf, posterOf } from "./deliver-forge.ts";
import type { Deliverers, EffectContext } from "./effects.ts";
import { keepCurrent } from "./stay-current.ts";

export const DEFAULT_CRITIC_MODEL = "claude-sonnet-5-5";

/** Thrown while CI runs: the outbox retries with backoff, which is the polling schedule. */
export class CiPending extends Error {
  /** Not a failure: polled again with backoff for as long as the CI timer lets the issue wait. */
  readonly waiting = true;
}

/** Another merge of the project holds the turn: tried again with backoff, bounded by the merge timer. */
export class MergeTurnPending extends Error {
  readonly waiting = true;
}

export const REVIEW_DELIVERERS: Deliverers = {
  watch_ci: async (_effect, ctx) => {
    const { issue } = ctx;
    // The issue moved on (a webhook reported first, a new push): this watch is over.
    if (issue.state !== "awaiting_ci" || !issue.headSha) return undefined;
    const { project, forge } = await forgeOf(ctx);
    // Read once on every forge: CI may have settled before the issue waited for it, its webhook unheard.
    const result = await readCi(ctx.env, project, forge, issue.number, issue.headSha);
    if (result) return result;
    // Gitea and GitHub push CI results as webhooks; only Forgejo has none to send, so only Forgejo is polled.
    if (project.forge !== "forgejo") return undefined;
    throw new CiPending(`CI pending for ${issue.headSha}`);
  },

  request_review: async (_effect, ctx) => {
    const { issue, env } = ctx;
    if (issue.state !== "awaiting_review") return undefined;
    if (issue.prNumber === null) throw new Error("the pull request's number is not known yet");
    const { project, poster } = await posterOf(ctx);
    const { forge } = poster;
    // The critic reviews the commit CI passed, and only while the branch is still there.
    const moved = issue.headSha && (await checkHead(forge, issue.number, issue.headSha));
    if (moved) return moved;
    // A head behind or in conflict with the base is brought up to date first; the critic reviews that one.
    const stale = issue.headSha && (await keepCurrent(forge, issue.prNumber, issue.headSha));
    if (stale) return stale;
    const apiKey = env.ANTHROPIC_API_KEY;
    if (!apiKey) throw new Error("ANTHROPIC_API_KEY is not configured: the critic cannot run");
    const [mirrored] = await mirroredIssues(env, project.id, [issue.number]);
    const diff = await forge.getPullRequestDiff(issue.prNumber);
    const round = issue.criticRounds + 1;
    const result = await runCritic(
      {
        apiKey,
        model: env.CRITIC_MODEL ?? DEFAULT_CRITIC_MODEL,
        ...(env.ANTHROPIC_BASE_URL && { baseURL: env.ANTHROPIC_BASE_URL }),
      },
      {
        repo: project.repo,
        issue: { number: issue.number, title: mirrored?.title ?? "", body: mirrored?.body ?? "" },
        diff,
        ci: project.settings.ci.kind === "none" ? "no CI configured" : `green on ${issue.headSha}`,
        ledger: await criticLedger(env, project.id, issue.number),
      },
    );
    if (!result.ok) return { type: "review_failed", reason: result.reason };

    const { report } = result;
    const decision = decide(report);
    await saveReport(
      env,
      { id: ctx.key, projectId: project.id, number: issue.number, round, headSha: issue.headSha },
      report,
    );
    await fileTechDebt(poster, project, ctx, decision.techDebt);
    await postReview(poster, issue.prNumber, ctx.key, report, decision.verdict);
    const approval =
      decision.verdict === "APPROVE"
        ? approvalReason(await fileListing(forge, issue.prNumber), project.settings.protectedPaths)
        : null;
    return {
      type: "review",
      verdict: decision.verdict,
      summary: decision.verdict === "REQUEST_CHANGES" ? findingsText(report, decision.toFix) : report.summary,
      ...(approval && { needsHumanApproval: approval }),
    };
  },

  merge: async (_effect, ctx) => {
    const { issue } = ctx;
    const prNumber = issue.prNumber;
    if (prNumber === null) throw new Error("the pull request's number is not known yet");
    const { forge } = await forgeOf(ctx);
    // From the check to the forge's answer, no other merge of the project lands on the base (./merge-turn.ts).
    const project = projectStub(ctx.env, issue.project);
    if (!(await project.takeMergeTurn(ctx.key)))
      throw new MergeTurnPending("another merge of the project is under way");
    try {
      // The base may have moved since the review: up to date first, and the new head is reviewed again.
      if (issue.state === "merging" && issue.headSha) {
        const stale = await keepCurrent(forge, prNumber, issue.headSha);
        if (stale) return stale;
      }
      const result = await forge.mergePullRequest(prNumber, {
        method: "merge",
        ...(issue.headSha && { sha: issue.headSha }),
      });
      // Merging is idempotent: a retry after a lost answer finds the pull request already merged.
      if (result.merged) {
        const pull = { number: prNumber, byConveyor: true };
        return { type: "merge_confirmed", ...pull, ...(issue.headSha && { sha: issue.headSha }) };
      }
      return { type: "merge_failed", reason: result.reason };
    } finally {
      await project.endMergeTurn(ctx.key);
    }
  },

  check_merged: async (_effect, ctx) => {
    const { issue } = ctx;
    // The merge's answer already ended the lifecycle (the usual case), or an operator did.
    if (issue.state === "merged" || issue.state === "abandoned") return undefined;
    return readMerged(ctx, { type: "issue_closed", unmerged: true });
  },

  check_merge: async (_effect, ctx) => {
    // The merge's answer came after all (merged, or failed and escalated): nothing left to check.
    if (ctx.issue.state !== "merging") return undefined;
    // Like the merge itself: nothing to ask about before the forge's number is known (retried, bounded).
    if (ctx.issue.prNumber === null) throw new Error("the pull request's number is not known yet");
    return readMerged(ctx, {
      type: "merge_failed",
      reason: "the pull request was not merged within the merge timeout",
    });
  },
};

/** Whether the issue's pull request is merged, as the forge says: merge_confirmed, or `unmerged`. */
async function readMerged(ctx: EffectContext, unmerged: LifecycleEvent): Promise<LifecycleEvent> {
  const { issue } = ctx;
  if (issue.prNumber === null) return unmerged;
  const { forge } = await forgeOf(ctx);
  const pull = await forge.getPullRequest(issue.prNumber);
  return pull.merged
    ? { type: "merge_confirmed", sha: pull.headSha, number: issue.prNumber, byConveyor: true }
    : unmerged;
}

/**
 * The forge's own list of the pull request's files, not a parse of its diff (quoted paths, binary files and
 * mode changes hide there). A forge that cannot answer means a human looks: the merge gate fails closed.
 */
async function fileListing(forge: ForgeClient, pr: number): Promise<FileListing> {
  try {
    return await forge.listPullRequestFiles(pr);
  } catch (error) {
    return {
      error: error instanceof Error ? (error.message.split("\n")[0]?.slice(0, 300) ?? "") : String(error),
    };
  }
}

/**
 * One review with the whole report (the verdict, the summary, the findings, in-scope ones also inline); a
 * forge refusing a self-review gets the same report as a comment review. Submitted once under the effect's
 * key, whichever of the two it was.
 */
async function postReview(
  poster: Poster,
  pr: number,
  key: string,
  report: CriticReport,
  verdict: CriticReport["verdict"],
) {
  const body = reviewText(report, verdict);
  const event = verdict === "APPROVE" ? "APPROVE" : "REQUEST_CHANGES";
  const comments = report.findings
    .filter((f) => f.inScope && f.line)
    .map((f) => ({ path: f.file, line: f.line ?? 1, body: `[${f.severity}] ${f.comment}` }));
  try {
    await reviewOnce(poster, pr, key, { event, body, comments });
  } catch (error) {
    if (!hasStatus(error, 422)) throw error;
    await reviewOnce(poster, pr, key, { event: "COMMENT", body });
  }
}

function reviewText(report: CriticReport, verdict: CriticReport["verdict"]): string {
  const findings = report.findings.map(
    (f) =>
      `- **${f.severity}**${f.inScope ? "" : " (out of scope → tech debt)"} \`${f.file}${f.line ? `:${f.line}` : ""}\`: ${f.comment}`,
  );
  return [
    `**Critic: ${verdict}**`,
    "",
    report.summary,
    ...(findings.length > 0 ? ["", ...findings] : []),
  ].join("\n");
}

/**
 * Out-of-scope findings become their own issues, labelled tech-debt, once each (found again by a marker in an
 * issue Conveyor opened).
 */
async function fileTechDebt(poster: Poster, project: Project, ctx: EffectContext, findings: Finding[]) {
  if (findings.length === 0) return;
  const { forge, account, secretsKey } = poster;
  const label = project.settings.labels.techDebt;
  const existing = await forge.listIssuesByLabel(label, "all");
  for (const [i, finding] of findings.entries()) {
    const marker = await commentMarker(secretsKey, `${ctx.key}:debt:${i}`);
    if (existing.some((issue) => sameLogin(issue.author, account) && issue.body.includes(marker))) continue;
    await forge.createIssue({
      title: `Tech debt: ${finding.comment.split("\n")[0]?.slice(0, 80)}`,
      body: [
        `Found by the critic while reviewing #${ctx.issue.number}, outside that issue's scope.`,
        "",
        `\`${finding.file}${finding.line ? `:${finding.line}` : ""}\` (${finding.severity}): ${finding.comment}`,
        "",
        marker,
      ].join("\n"),
      labels: [label],
    });
  }
}

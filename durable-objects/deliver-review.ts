/**
 * The review loop's effects: watching CI, the critic's review, and the merge. Each returns what it learned
 * as a lifecycle event, recorded with its acknowledgement.
 */
import { redExcerpt } from "../src/ci/excerpt.ts";
import { runCritic } from "../src/critic/critic.ts";
import { criticLedger, saveReport } from "../src/critic/ledger.ts";
import { type CriticReport, decide, type Finding, findingsText } from "../src/critic/report.ts";
import { combinedVerdict } from "../src/domain/ci-verdict.ts";
import { approvalReason, type FileListing } from "../src/domain/protected-paths.ts";
import type { ForgeClient } from "../src/forge/client/index.ts";
import { hasStatus } from "../src/forge/client/index.ts";
import { commentOnce } from "../src/forge/comment-once.ts";
import { mirroredIssues } from "../src/projects/mirror.ts";
import type { Project } from "../src/projects/store.ts";
import { forgeOf } from "./deliver-forge.ts";
import type { Deliverers, EffectContext } from "./effects.ts";

export const DEFAULT_CRITIC_MODEL = "claude-sonnet-5-5";

/** Thrown while CI runs: the outbox retries with backoff, which is the polling schedule. */
export class CiPending extends Error {}

export const REVIEW_DELIVERERS: Deliverers = {
  watch_ci: async (_effect, ctx) => {
    const { issue } = ctx;
    // The issue moved on (a webhook reported first, a new push): this watch is over.
    if (issue.state !== "awaiting_ci" || !issue.headSha) return undefined;
    const { project, forge } = await forgeOf(ctx);
    if (project.settings.ci.kind === "none") return { type: "ci", result: "green", headSha: issue.headSha };
    // Gitea and GitHub push CI results as webhooks; only Forgejo has none to send, so only Forgejo is polled.
    if (project.forge !== "forgejo") return undefined;
    const verdict = combinedVerdict(
      (await forge.getCombinedStatus(issue.headSha)).statuses,
      project.settings.ci.contextPattern,
    );
    if (verdict.kind === "pending") throw new CiPending(`CI pending for ${issue.headSha}`);
    return verdict.kind === "green"
      ? { type: "ci", result: "green", headSha: issue.headSha }
      : {
          type: "ci",
          result: "red",
          headSha: issue.headSha,
          excerpt: await redExcerpt(ctx.env, project, verdict),
        };
  },

  request_review: async (_effect, ctx) => {
    const { issue, env } = ctx;
    if (issue.state !== "awaiting_review") return undefined;
    if (issue.prNumber === null) throw new Error("the pull request's number is not known yet");
    const { project, forge } = await forgeOf(ctx);
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
    await fileTechDebt(forge, project, ctx, decision.techDebt);
    await postReview(forge, issue.prNumber, ctx.key, report, decision.verdict);
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
    if (issue.prNumber === null) throw new Error("the pull request's number is not known yet");
    const { forge } = await forgeOf(ctx);
    const result = await forge.mergePullRequest(issue.prNumber, {
      method: "merge",
      ...(issue.headSha && { sha: issue.headSha }),
    });
    // Merging is idempotent: a retry after a lost answer finds the pull request already merged.
    if (result.merged) return { type: "merge_confirmed", ...(issue.headSha && { sha: issue.headSha }) };
    return { type: "merge_failed", reason: result.reason };
  },
};

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

/** A formal review, plus a comment with the report; a forge refusing a self-review gets a plain comment review. */
async function postReview(
  forge: ForgeClient,
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
  await commentOnce(forge, pr, key, body);
  try {
    await forge.createReview(pr, { event, body: report.summary, comments });
  } catch (error) {
    if (!hasStatus(error, 422)) throw error;
    await forge.createReview(pr, { event: "COMMENT", body: `${verdict}: ${report.summary}` });
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

/** Out-of-scope findings become their own issues, labelled tech-debt, once each (found again by a marker). */
async function fileTechDebt(forge: ForgeClient, project: Project, ctx: EffectContext, findings: Finding[]) {
  if (findings.length === 0) return;
  const label = project.settings.labels.techDebt;
  const existing = await forge.listIssuesByLabel(label, "all");
  for (const [i, finding] of findings.entries()) {
    const marker = `<!-- conveyor:${ctx.key}:debt:${i} -->`;
    if (existing.some((issue) => issue.body.includes(marker))) continue;
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

/**
 * Applying a critic's report, wherever the critic ran (the Worker's Messages-API call, or the `reviewer` agent
 * on a runner): the decision (src/critic/report.ts), the report kept in the critic ledger, out-of-scope
 * findings filed as tech debt, the review posted on the forge once under `key`, and the merge gate read from
 * the forge's own file listing. Returns the lifecycle event the issue hears.
 */
import { commentMarker } from "../crypto/markers.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import { sameLogin } from "../domain/logins.ts";
import { approvalReason, type FileListing } from "../domain/protected-paths.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import { hasStatus } from "../forge/client/index.ts";
import { type Poster, reviewOnce } from "../forge/comment-once.ts";
import { visibleText } from "../forge/post/characters.ts";
import type { PostPolicy } from "../forge/post/policy.ts";
import { composePost, type Piece, type PostBody, postTitle, withMarker } from "../forge/post/post.ts";
import { codeSpan, freeTicks } from "../forge/post/prose.ts";
import type { Project } from "../projects/store.ts";
import { saveReport } from "./ledger.ts";
import { type CriticReport, decide, type Finding, findingsText } from "./report.ts";

/**
 * Which review this is: `key` names it for the once-markers and the ledger (the request_review effect's);
 * `by` names the reviewer on what is posted (the critic, or the reviewer agent's run).
 */
export type ReviewTarget = {
  key: string;
  number: number;
  prNumber: number;
  headSha: string | null;
  by: string;
};

/** The Worker's critic, as its posts name it. */
export const WORKER_CRITIC = "The critic";

export type ReviewEvent = Extract<LifecycleEvent, { type: "review" }>;

export async function applyCriticReport(
  env: Env,
  poster: Poster,
  project: Project,
  target: ReviewTarget,
  report: CriticReport,
): Promise<ReviewEvent> {
  const decision = decide(report);
  await saveReport(
    env,
    {
      id: target.key,
      projectId: project.id,
      number: target.number,
      headSha: target.headSha,
    },
    report,
  );
  await fileTechDebt(poster, project, target, decision.techDebt);
  await postReview(poster, target, report, decision.verdict);
  const approval =
    decision.verdict === "APPROVE"
      ? approvalReason(await fileListing(poster.forge, target.prNumber), project.settings.protectedPaths)
      : null;
  return {
    type: "review",
    verdict: decision.verdict,
    summary: decision.verdict === "REQUEST_CHANGES" ? findingsText(report, decision.toFix) : report.summary,
    ...(approval && { needsHumanApproval: approval }),
  };
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
 * forge refusing a self-review gets the same report as a comment review. Submitted once under `key`,
 * whichever of the two it was. The reviewer's words are quoted apart under its name and defused. An
 * `advisory` review (of a person's pull request) is a comment review whatever the verdict: the approval or
 * rejection a branch protection counts stays with people, so a review the code under review forged cannot
 * merge it.
 */
export async function postReview(
  poster: Poster,
  { prNumber: pr, key, by }: Pick<ReviewTarget, "prNumber" | "key" | "by">,
  report: CriticReport,
  verdict: CriticReport["verdict"],
  options: { advisory?: boolean } = {},
) {
  const body = reviewText(poster.policy, by, report, verdict);
  const event = options.advisory ? "COMMENT" : verdict === "APPROVE" ? "APPROVE" : "REQUEST_CHANGES";
  const comments = report.findings
    .filter((f) => f.inScope && f.line)
    .map((f) => ({
      path: f.file,
      line: f.line ?? 1,
      body: composePost(poster.policy, [{ quote: f.comment, by: `${by}, **${f.severity}**:` }]),
    }));
  try {
    await reviewOnce(poster, pr, key, { event, body, comments });
  } catch (error) {
    if (!hasStatus(error, 422)) throw error;
    await reviewOnce(poster, pr, key, { event: "COMMENT", body });
  }
}

function reviewText(
  policy: PostPolicy,
  by: string,
  report: CriticReport,
  verdict: CriticReport["verdict"],
): PostBody {
  const findings: Piece[] = report.findings.map((f) => ({
    quote: f.comment,
    by: `**${f.severity}**${f.inScope ? "" : " (out of scope → tech debt)"} ${fileCode(f)}:`,
  }));
  return composePost(policy, [
    { conveyor: `**Critic: ${verdict}**` },
    { quote: report.summary, by: `${by} wrote:` },
    ...findings,
  ]);
}

/**
 * The finding's file and line as code, which nothing reads as a mention, a link or a keyword. The path is the
 * reviewer's: what no reader sees (a marker among it) is dropped first.
 */
const fileCode = (f: Finding) => {
  const file = visibleText(f.file);
  return codeSpan(`${file}${f.line ? `:${f.line}` : ""}`, freeTicks(file));
};

/**
 * Out-of-scope findings become their own issues, labelled tech-debt, once each (found again by a marker in an
 * issue Conveyor opened).
 */
async function fileTechDebt(poster: Poster, project: Project, target: ReviewTarget, findings: Finding[]) {
  if (findings.length === 0) return;
  const { forge, account, secretsKey } = poster;
  const label = project.settings.labels.techDebt;
  const existing = await forge.listIssuesByLabel(label, "all");
  for (const [i, finding] of findings.entries()) {
    const marker = await commentMarker(secretsKey, `${target.key}:debt:${i}`);
    if (existing.some((issue) => sameLogin(issue.author, account) && issue.body.includes(marker))) continue;
    const body = composePost(poster.policy, [
      { conveyor: `Found while reviewing #${target.number}, outside that issue's scope.` },
      { quote: finding.comment, by: `${target.by} wrote of ${fileCode(finding)} (${finding.severity}):` },
    ]);
    await forge.createIssue({
      title: postTitle(poster.policy, `Tech debt: ${finding.comment.split("\n")[0]?.slice(0, 80)}`),
      body: withMarker(body, marker),
      labels: [label],
    });
  }
}

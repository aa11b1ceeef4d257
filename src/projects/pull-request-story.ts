/** What the pull request's description tells (pull-request-body.ts), read from the Worker's own record in D1. */
import { and, asc, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { criticReports, transitions } from "../db/schema.ts";
import type { Env } from "../env.ts";
import type { PullRequestStory } from "../forge/pull-request-body.ts";

export async function pullRequestStory(
  env: Env,
  projectId: string,
  issue: { number: number; branch: string; summary: string | null },
): Promise<PullRequestStory> {
  const d = drizzle(env.DB);
  const ofIssue = (table: typeof transitions | typeof criticReports) =>
    and(eq(table.projectId, projectId), eq(table.number, issue.number));
  const [ci, critic] = await Promise.all([
    d
      .select({ to: transitions.toState })
      .from(transitions)
      .where(and(ofIssue(transitions), eq(transitions.event, "ci"), eq(transitions.outcome, "applied")))
      .orderBy(asc(transitions.seq))
      .all(),
    d
      .select({ round: criticReports.round, verdict: criticReports.verdict, summary: criticReports.summary })
      .from(criticReports)
      .where(ofIssue(criticReports))
      .orderBy(asc(criticReports.round))
      .all(),
  ]);
  // A green verdict moves the issue to review; a red one to a revision, or to a human past the cap.
  return { ...issue, ci: ci.map((row) => ({ green: row.to === "awaiting_review" })), critic };
}

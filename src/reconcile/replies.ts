/**
 * Lost comments on an escalated issue (and its pull request): `/conveyor retry`, a maintainer's reply.
 * Which issues are escalated, and since when, is asked of their own objects, not of D1, whose copy lags the
 * object's. A reply is a comment the forge stamped after the escalation: its moment on this machine's clock,
 * moved to the forge's by the offset the cycle's listing measured (its `Date`), less `CLOCK_MARGIN_MS`. A
 * writer who sees the issue escalate (on the dashboard, by its label) may answer before Conveyor's notice
 * lands, so the notice is no bound; it is the bound only where the forge gave no clock to compare with.
 */

import { sameLogin } from "../domain/logins.ts";
import type { Env } from "../env.ts";
import type { ForgeClient, IssueComment } from "../forge/client/index.ts";
import { ESCALATION_HEADLINE } from "../forge/escalation-notice.ts";
import { routeComment } from "../hooks/route-comment.ts";
import { issueStub } from "../issue-stub.ts";
import { conveyorAccount } from "../projects/account.ts";
import type { Cause } from "../projects/lifecycle-client.ts";
import type { Project } from "../projects/store.ts";
import type { ChangedThreads } from "./live.ts";

type Thread = { number: number; isPullRequest: boolean };

/**
 * The offset's error: the `Date` header's whole second and the listing's round trip. A comment this much
 * before the escalation counts as a reply to it.
 */
export const CLOCK_MARGIN_MS = 3_000;

/** Routes the replies on `live` issues' threads the listing says changed; returns how many were routed. */
export async function reconcileReplies(reads: ChangedThreads, clockOffset: number | null): Promise<number> {
  const { env, project, forge, cause, live, changed, failures } = reads;
  let routed = 0;
  for (const entry of live) {
    // Only the threads the listing says changed: a comment updates its issue or pull request.
    const threads: Thread[] = [
      { number: entry.number, isPullRequest: false },
      ...(entry.prNumber === null ? [] : [{ number: entry.prNumber, isPullRequest: true }]),
    ].filter((thread) => changed.has(thread.number));
    if (threads.length === 0) continue;
    const numbers = threads.map((thread) => thread.number);
    await failures.isolate(`replies on #${entry.number}`, numbers, async () => {
      const view = await issueStub(env, project.id, entry.number).view();
      if (view?.state !== "escalated") return;
      const escalatedAt = view.history.findLast((e) => e.outcome === "applied" && e.to === "escalated")?.at;
      const since =
        clockOffset === null || escalatedAt === undefined
          ? null
          : escalatedAt + clockOffset - CLOCK_MARGIN_MS;
      routed += await readReplies(env, project, forge, cause, entry.number, threads, since);
    });
  }
  return routed;
}

async function readReplies(
  env: Env,
  project: Project,
  forge: ForgeClient,
  cause: Cause,
  number: number,
  threads: Thread[],
  since: number | null,
): Promise<number> {
  const account = await conveyorAccount(env, project);
  const onIssue = await forge.listComments(number);
  const notice = onIssue
    .filter((c) => sameLogin(c.author, account) && c.body.startsWith(ESCALATION_HEADLINE))
    .at(-1);
  const bound = since ?? (notice ? Date.parse(notice.createdAt) : null);
  // Without a clock to compare with and no notice on the forge yet, nothing there is known to answer it.
  if (bound === null) return 0;
  const after = (comment: IssueComment) =>
    !sameLogin(comment.author, account) && Date.parse(comment.createdAt) >= bound;
  let routed = 0;
  for (const thread of threads) {
    const comments = thread.isPullRequest ? await forge.listComments(thread.number) : onIssue;
    for (const comment of comments.filter(after)) {
      const event = {
        type: "comment" as const,
        action: "created" as const,
        forge: project.forge,
        repository: project.repo,
        sender: comment.author,
        comment: {
          issueNumber: thread.number,
          isPullRequest: thread.isPullRequest,
          commentId: comment.id,
          body: comment.body,
          author: comment.author,
        },
      };
      const key = `cron:comment:${comment.id}`;
      const answer = await routeComment(env, project, event, key, cause, { number, state: "escalated" });
      if (answer.kind === "routed") routed++;
    }
  }
  return routed;
}

/**
 * Lost comments on an escalated issue (and its pull request): `/conveyor retry`, a maintainer's reply.
 * Which issues are escalated is asked of their own objects, not of D1, whose copy lags the object's; which
 * comments are replies is read from the forge alone: those after Conveyor's latest escalation notice there,
 * by the forge's times (never this machine's clock against the forge's).
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
import type { LiveIssue } from "./live.ts";

type Thread = { number: number; isPullRequest: boolean };

/** Routes the replies on `live` issues' threads the listing says changed; returns how many were routed. */
export async function reconcileReplies(
  env: Env,
  project: Project,
  forge: ForgeClient,
  cause: Cause,
  live: readonly LiveIssue[],
  changed: ReadonlySet<number>,
): Promise<number> {
  let routed = 0;
  for (const entry of live) {
    // Only the threads the listing says changed: a comment updates its issue or pull request.
    const threads: Thread[] = [
      { number: entry.number, isPullRequest: false },
      ...(entry.prNumber === null ? [] : [{ number: entry.prNumber, isPullRequest: true }]),
    ].filter((thread) => changed.has(thread.number));
    if (threads.length === 0) continue;
    if ((await issueStub(env, project.id, entry.number).view())?.state !== "escalated") continue;
    routed += await readReplies(env, project, forge, cause, entry.number, threads);
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
): Promise<number> {
  const account = await conveyorAccount(env, project);
  const onIssue = await forge.listComments(number);
  const notice = onIssue
    .filter((c) => sameLogin(c.author, account) && c.body.startsWith(ESCALATION_HEADLINE))
    .at(-1);
  // No notice on the forge yet: nothing there answers it.
  if (!notice) return 0;
  const after = (comment: IssueComment) =>
    comment.id !== notice.id && Date.parse(comment.createdAt) >= Date.parse(notice.createdAt);
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

/** What a forge event means for Conveyor: mirror updates and lifecycle events. No decisions here. */
import { type State, TERMINAL_STATES } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { ForgeEvent, IssueEvent, PullRequestEvent } from "../forge/webhooks/events.ts";
import { regateDependents, triage, wantsWork } from "../projects/dispatch.ts";
import { toMirrored } from "../projects/gate.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { lifecycleStates, mirrorIssue } from "../projects/mirror.ts";
import { lazyForges, type Project } from "../projects/store.ts";
import { type DeliveryRecord, deliveryWrite } from "./deliveries.ts";
import { routeCi } from "./route-ci.ts";
import { routeComment, routeReview, wantsAbandon } from "./route-comment.ts";

/** `recorded`: the delivery's own record was written with the route's writes. */
export type Routed =
  | { kind: "routed"; events: number; recorded?: true }
  | { kind: "ignored"; reason: string };

/** `key` identifies the delivery's content: lifecycle event ids derive from it, so replays apply once. */
export async function routeEvent(
  env: Env,
  project: Project,
  event: ForgeEvent,
  key: string,
  cause: Cause,
  record: DeliveryRecord,
): Promise<Routed> {
  switch (event.type) {
    case "issue":
      return routeIssue(env, project, event, key, cause, record);
    case "pull_request":
      return routePullRequest(env, project, event, key, cause);
    case "comment":
      return routeComment(env, project, event, key, cause);
    case "ci":
      return routeCi(env, project, event, key, cause);
    case "review":
      return routeReview(env, project, event, key, cause);
  }
}

async function routeIssue(
  env: Env,
  project: Project,
  event: IssueEvent,
  key: string,
  cause: Cause,
  record: DeliveryRecord,
): Promise<Routed> {
  const issue = toMirrored(project, event.issue);
  // Most issue events only update the mirror: then the delivery is finished in the same round trip.
  const quiet =
    issue.state === "open" &&
    event.action !== "reopened" &&
    !wantsWork(project, issue) &&
    !wantsAbandon(issue.labels);
  const finish = quiet ? [deliveryWrite(env, record, "processed")] : [];
  const state = await mirrorIssue(env, project.id, issue, Date.now(), finish);
  if (quiet) return { kind: "routed", events: 0, recorded: true };
  const forges = lazyForges(env, project);
  let events = 0;
  const live = state !== undefined && !TERMINAL_STATES.includes(state as State);
  if (live && wantsAbandon(issue.labels) && event.action !== "opened") {
    await sendEvent(env, project, issue.number, `${key}:abandon`, cause, {
      type: "abandon",
      by: event.sender,
    });
    return { kind: "routed", events: 1 };
  }
  if (issue.state === "closed") {
    if (state !== undefined) {
      await sendEvent(env, project, issue.number, `${key}:closed`, cause, { type: "issue_closed" });
      events++;
    }
  } else if (await triage(env, project, issue, state, `${key}:triage`, cause, forges)) {
    events++;
  }
  if (event.action === "closed" || event.action === "reopened") {
    events += await regateDependents(env, project, issue.number, key, cause, forges);
  }
  return { kind: "routed", events };
}

async function routePullRequest(
  env: Env,
  project: Project,
  event: PullRequestEvent,
  key: string,
  cause: Cause,
): Promise<Routed> {
  const opened = event.action === "opened" || event.action === "reopened";
  if (!opened && event.action !== "closed" && event.action !== "merged") {
    return { kind: "ignored", reason: `pull_request ${event.action} needs no action` };
  }
  const { linkedIssues, merged, headSha, number: pull } = event.pullRequest;
  const states = await lifecycleStates(env, project.id, linkedIssues);
  let events = 0;
  for (const number of linkedIssues.filter((n) => states.has(n))) {
    await sendEvent(
      env,
      project,
      number,
      `${key}:pr:${number}`,
      cause,
      // An opened pull request's number reaches the issue even when the answer to Conveyor's own create was lost.
      opened
        ? { type: "pr_opened", number: pull }
        : merged
          ? { type: "merge_confirmed", sha: headSha }
          : { type: "pr_closed" },
    );
    events++;
  }
  return { kind: "routed", events };
}

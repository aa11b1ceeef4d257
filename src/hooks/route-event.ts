/** What a forge event means for Conveyor: mirror updates and lifecycle events. No decisions here. */
import { type State, TERMINAL_STATES } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { ForgeEvent, IssueEvent, PullRequestEvent } from "../forge/webhooks/events.ts";
import { regateDependents, triage } from "../projects/dispatch.ts";
import { toMirrored } from "../projects/gate.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { lifecycleStates, mirrorIssue } from "../projects/mirror.ts";
import { lazyForges, type Project } from "../projects/store.ts";
import {
  type DeliveryRecord,
  deliverySeen,
  deliveryWrite,
  findFinished,
  finishedQuery,
} from "./deliveries.ts";
import { routeCi } from "./route-ci.ts";
import { routeComment, routeReview, wantsAbandon } from "./route-comment.ts";

/** `recorded`: the delivery's own record was written with the route's writes. */
export type Routed =
  | { kind: "routed"; events: number; recorded?: true }
  | { kind: "ignored"; reason: string }
  | { kind: "duplicate"; outcome: string };

/** `key` identifies the delivery's content: lifecycle event ids derive from it, so replays apply once. */
export async function routeEvent(
  env: Env,
  project: Project,
  event: ForgeEvent,
  key: string,
  cause: Cause,
  record: DeliveryRecord,
): Promise<Routed> {
  // An issue event dedupes in the same round trip as its mirror write; the others look first.
  if (event.type === "issue") return routeIssue(env, project, event, key, cause, record);
  const finished = await findFinished(env, record);
  if (finished) return { kind: "duplicate", outcome: finished.outcome };
  switch (event.type) {
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
  const quiet = isQuiet(project, event);
  const { state, first } = await mirrorIssue(env, project.id, issue, {
    first: finishedQuery(env, record),
    // A seen delivery writes nothing: a replayed old one cannot roll the mirror back.
    unless: deliverySeen(record),
    // No lifecycle event can follow: the delivery is finished in the same round trip.
    also: quiet ? [deliveryWrite(env, record, "processed")] : [],
  });
  const [seen] = first as { outcome: string }[];
  if (seen) return { kind: "duplicate", outcome: seen.outcome };
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

/** Most issue events only update the mirror: no lifecycle event can follow from them. */
function isQuiet(project: Project, event: IssueEvent): boolean {
  const { state, labels } = event.issue;
  return (
    state === "open" &&
    event.action !== "reopened" &&
    !labels.includes(project.settings.labels.backlog) &&
    !wantsAbandon(labels)
  );
}

/** What a forge event means for Conveyor: mirror updates and lifecycle events. No decisions here. */
import { type Brief, type LifecycleEvent, type State, TERMINAL_STATES } from "../domain/lifecycle.ts";
import { sameLogin } from "../domain/logins.ts";
import { isConveyorPull, issueFromBranch } from "../domain/pull-requests.ts";
import { needsWriter, queuer } from "../domain/queueing.ts";
import type { Env } from "../env.ts";
import type { ForgeEvent, IssueEvent, PullRequestEvent } from "../forge/webhooks/events.ts";
import { conveyorAccount } from "../projects/account.ts";
import { isGated, regateDependents, triage, wantsWork } from "../projects/dispatch.ts";
import { toMirrored } from "../projects/gate.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { lifecycleStates, type MirroredIssue, mirrorIssue } from "../projects/mirror.ts";
import { lazyForges, type Project } from "../projects/store.ts";
import { type DeliveryRecord, deliveryKeys, deliveryWrite, findFinished } from "./deliveries.ts";
import { routeCi } from "./route-ci.ts";
import { canCommand, routeComment, wantsAbandon } from "./route-comment.ts";
import { routeReview } from "./route-review.ts";

/** `recorded`: the delivery's own record was written with the route's writes. */
export type Routed =
  | { kind: "routed"; events: number; recorded?: true }
  | { kind: "ignored"; reason: string }
  | { kind: "duplicate"; outcome: string };

/**
 * `key` identifies the delivery's content: lifecycle event ids derive from it, so replays apply once.
 * `deduped`: the caller found no finished delivery of this id or content just now (the agents' trigger asks).
 */
export async function routeEvent(
  env: Env,
  project: Project,
  event: ForgeEvent,
  key: string,
  cause: Cause,
  record: DeliveryRecord,
  deduped = false,
): Promise<Routed> {
  // An issue event dedupes in the same round trip as its mirror write; the others look first.
  if (event.type === "issue") return routeIssue(env, project, event, key, cause, record);
  const finished = deduped ? null : await findFinished(env, record);
  if (finished) return { kind: "duplicate", outcome: finished.outcome };
  switch (event.type) {
    case "pull_request":
      return routePullRequest(env, project, event, key, cause, record);
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
  const { state, seen } = await mirrorIssue(env, project.id, issue, {
    // A seen delivery writes nothing: a replayed old one cannot roll the mirror back.
    delivery: deliveryKeys(record),
    // No lifecycle event can follow: the delivery is finished in the same round trip.
    also: quiet ? [deliveryWrite(env, record, "processed")] : [],
  });
  if (seen) return { kind: "duplicate", outcome: seen };
  if (quiet) return { kind: "routed", events: 0, recorded: true };
  const forges = lazyForges(env, project);
  let events = 0;
  const live = state !== undefined && !TERMINAL_STATES.includes(state as State);
  // A delivery whose only lifecycle event is sent last hands its record to that event's Durable Object,
  // which writes it to D1 with the edge: no write of the Worker's own waits after the apply.
  const handOver = { ...deliveryKeys(record), event: record.event, number: record.number };
  if (live && wantsAbandon(issue.labels) && event.action !== "opened") {
    const abandon = { type: "abandon" as const, by: event.sender };
    return handedOver(
      await sendEvent(env, project, issue.number, `${key}:abandon`, cause, abandon, handOver),
    );
  }
  const regate = event.action === "closed" || event.action === "reopened";
  if (issue.state === "closed") {
    if (state !== undefined) {
      await sendEvent(env, project, issue.number, `${key}:closed`, cause, { type: "issue_closed" });
      events++;
    }
  } else {
    const id = `${key}:triage`;
    const by = queuer(event, project.settings.labels.backlog, await conveyorAccount(env, project));
    const asking = by !== null && wantsWork(project, issue) && isGated(state);
    // Only a writer's text is queued: the permission is asked only when there is text to take.
    const brief = asking && (await canCommand(await forges(), by)) ? writersBrief(event, by) : undefined;
    const triaged = await triage(
      env,
      project,
      issue,
      state,
      id,
      cause,
      forges,
      regate ? undefined : handOver,
      brief,
    );
    if (triaged && !regate) return handedOver(triaged);
    if (triaged) events++;
    if (!regate && !brief && needsWriter(state) && wantsWork(project, issue)) {
      const why =
        by !== null
          ? `${by} has no write access`
          : sameLogin(event.sender, await conveyorAccount(env, project))
            ? "Conveyor's own event queues nothing"
            : `an issue ${event.action} event queues nothing`;
      return { kind: "ignored", reason: `not queued: ${why}` };
    }
  }
  if (regate) {
    events += await regateDependents(env, project, issue.number, key, cause, forges);
  }
  return { kind: "routed", events };
}

/** The issue's text as this event carries it, queued by `by`. */
const writersBrief = (event: IssueEvent, by: string): Brief => ({
  title: event.issue.title,
  body: event.issue.body,
  by,
});

/** The answer for a delivery whose one event carried its record: a duplicate if that event already was. */
const handedOver = (result: { duplicate: boolean }): Routed =>
  result.duplicate
    ? { kind: "duplicate", outcome: "processed" }
    : { kind: "routed", events: 1, recorded: true };

async function routePullRequest(
  env: Env,
  project: Project,
  event: PullRequestEvent,
  key: string,
  cause: Cause,
  record: DeliveryRecord,
): Promise<Routed> {
  const opened = event.action === "opened" || event.action === "reopened";
  const pull = event.pullRequest;
  // Only a `conveyor/<n>` branch names the issue; closing keywords never drive the lifecycle.
  const number =
    opened || event.action === "closed" || event.action === "merged" ? issueFromBranch(pull.headRef) : null;
  const live = number !== null && (await lifecycleStates(env, project.id, [number])).has(number);
  // Every pull request is mirrored, dated, as issues are by their events; a seen delivery writes nothing. With
  // no lifecycle event to follow, the delivery is finished in the same round trip.
  const mirrored = mirroredPull(project, event);
  if (mirrored) {
    const { seen } = await mirrorIssue(env, project.id, mirrored, {
      delivery: deliveryKeys(record),
      also: live ? [] : [deliveryWrite(env, record, "processed")],
    });
    if (seen) return { kind: "duplicate", outcome: seen };
    if (!live) return { kind: "routed", events: 0, recorded: true };
  }
  if (number === null || !live) return { kind: "routed", events: 0 };
  // Whether this pull request may speak for the issue is the lifecycle's decision; the route says whose it is.
  const ref = {
    number: pull.number,
    byConveyor: isConveyorPull(pull, project.repo, await conveyorAccount(env, project)),
  };
  await sendEvent(
    env,
    project,
    number,
    `${key}:pr:${number}`,
    cause,
    pullRequestLifecycle(opened, pull, ref),
  );
  return { kind: "routed", events: 1 };
}

/**
 * What the mirror keeps of the event's pull request; null when a partial payload does not say its state (and
 * its action does not tell it either), since the mirror keeps no row without one.
 */
function mirroredPull(project: Project, event: PullRequestEvent): MirroredIssue | null {
  const { action, pullRequest: pull } = event;
  const told =
    action === "opened" || action === "reopened"
      ? "open"
      : action === "closed" || action === "merged"
        ? "closed"
        : null;
  const state = pull.state ?? told;
  if (state === null) return null;
  return toMirrored(project, { ...pull, state, isPullRequest: true });
}

/** What a pull request's opening or closing means for its issue (webhooks and reconciliation alike). */
export function pullRequestLifecycle(
  opened: boolean,
  pull: { merged: boolean; headSha: string },
  ref: { number: number; byConveyor: boolean },
): LifecycleEvent {
  // An opened pull request's number reaches the issue even when the answer to Conveyor's own create was lost.
  if (opened) return { type: "pr_opened", ...ref };
  return pull.merged ? { type: "merge_confirmed", sha: pull.headSha, ...ref } : { type: "pr_closed", ...ref };
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

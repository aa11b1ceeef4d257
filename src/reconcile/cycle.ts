/**
 * One reconciliation cycle of one project, run by its ProjectDO's alarm: whatever a lost webhook failed to
 * tell Conveyor, the forge's own state tells it here, so a lost delivery delays work by at most one cycle.
 *
 * Forge reads grow with what changed, not with what is live: one listing of the issues and pull requests
 * updated since the last cycle (conditional: unchanged, it is a free 304), then reads only for the changed
 * ones, plus the CI of issues awaiting it (conditional too). Every lifecycle event goes out under an id
 * derived from what it reconciles, so a second cycle over the same state changes nothing, and the lifecycle
 * refuses the late real webhook's copy of a transition it already took. One item that cannot be reconciled (its
 * reads fail) costs only itself: the cycle goes on with the others and reads it again next time
 * (`afterFailures`); a rate limit ends the cycle.
 */

import { reviewPeoplesPulls } from "../agents/people-reviews.ts";
import { readCi } from "../ci/gate.ts";
import { type State, TERMINAL_STATES } from "../domain/lifecycle.ts";
import { afterFailures, type Cursor, changesSince } from "../domain/reconciliation.ts";
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import type { ForgeClient, Issue, UpdatedIssue } from "../forge/client/index.ts";
import { canCommand } from "../hooks/route-comment.ts";
import { pullRequestLifecycle } from "../hooks/route-event.ts";
import { issueStub } from "../issue-stub.ts";
import { log } from "../log.ts";
import { regateDependents, triage, wantsWork } from "../projects/dispatch.ts";
import { type Forges, gateFor, toMirrored } from "../projects/gate.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { type MirroredIssue, mirrorIssues } from "../projects/mirror.ts";
import type { Project } from "../projects/store.ts";
import { ItemFailures } from "./failures.ts";
import { type LiveIssue, liveIssues } from "./live.ts";
import { reconcileReplies } from "./replies.ts";
import { reconcileReviews } from "./reviews.ts";

export type CycleReport = {
  project: string;
  /** Issues and pull requests the listing showed changed. */
  changed: number;
  dispatched: number;
  regated: number;
  settled: number;
  pulls: number;
  ci: number;
  comments: number;
  /** People's pull requests' reviews queued once CI had a verdict (src/agents/people-reviews.ts). */
  reviews: number;
  /** Conveyor's pull requests whose reviews were read (./reviews.ts): changed ones of issues that listen. */
  reviewReads: number;
  /** People's reviews on those an issue heard for the first time (their webhooks lost). */
  humanReviews: number;
  /** Items whose reconciliation failed (each logged); those the listing showed are read again next cycle. */
  failed: number;
};

/** The first cycle looks this far back (and at the whole open backlog); later ones start where it ended. */
export const FIRST_LOOK_BACK_MS = 24 * 60 * 60_000;

export async function reconcileCycle(
  env: Env,
  project: Project,
  cursor: Cursor,
  forges: Forges,
  now = Date.now(),
): Promise<{ report: CycleReport; cursor: Cursor }> {
  const forge = await forges();
  const cause: Cause = { kind: "cron", id: new Date(now).toISOString() };
  const start =
    cursor.since === null
      ? { since: new Date(now - FIRST_LOOK_BACK_MS).toISOString(), seen: {} }
      : { ...cursor, since: cursor.since };
  const asked = Date.now();
  const { items: listed, forgeTime, heldAt } = await forge.listUpdatedSince(start.since);
  // The forge's clock less this machine's, as the listing's first page found it (its `Date`).
  const clockOffset = forgeTime === null ? null : forgeTime - asked;
  const listing = listed.map(listedItem);
  const { changed } = changesSince(start, listing, forgeTime, heldAt);
  const items: (UpdatedIssue | Issue)[] = changed.map((entry) => entry.item);
  if (cursor.since === null) {
    // Labelled before Conveyor watched: the open backlog, once (read without times: the mirror keeps its own).
    const known = new Set(items.map((item) => item.number));
    const backlog = await forge.listIssuesByLabel(project.settings.labels.backlog, "open");
    items.push(...backlog.filter((i) => !known.has(i.number)));
  }

  const report: CycleReport = {
    project: project.id,
    changed: changed.length,
    dispatched: 0,
    regated: 0,
    settled: 0,
    pulls: 0,
    ci: 0,
    comments: 0,
    reviews: 0,
    reviewReads: 0,
    humanReviews: 0,
    failed: 0,
  };
  const live = await liveIssues(env, project.id);
  // Pull requests too: the mirror keeps their times and the issues they link (agents see them).
  const mirrored = items.map((item) => toMirrored(project, item));
  // One D1 batch for the cycle's mirror writes, reading back every lifecycle state with them.
  const states = await mirrorIssues(env, project.id, mirrored, now);
  const context = { env, project, cause, forges, forge, report };
  const failures = new ItemFailures(project.id);
  for (const issue of mirrored) {
    const listed = items.find((item) => item.number === issue.number);
    if (!listed || listed.isPullRequest) continue;
    const occurrence = { author: listed.author, updatedAt: "updatedAt" in listed ? listed.updatedAt : "" };
    await failures.isolate(`issue #${issue.number}`, [issue.number], () =>
      reconcileIssue(context, issue, states.get(issue.number), occurrence),
    );
  }
  const threads = {
    env,
    project,
    forge,
    cause,
    live,
    changed: new Set(items.map((i) => i.number)),
    failures,
  };
  report.comments += await reconcileReplies(threads, clockOffset);
  const heard = await reconcileReviews(threads, Date.parse(start.since));
  report.reviewReads = heard.read;
  report.humanReviews = heard.heard;
  for (const pull of items.filter((item) => item.isPullRequest && item.state === "closed")) {
    const owner = live.find((entry) => entry.prNumber === pull.number);
    if (owner)
      await failures.isolate(`pull request #${pull.number}`, [pull.number], () =>
        reconcilePull(context, owner, pull.number),
      );
  }
  // Read every cycle while the issue waits: a failed read is simply read again next time.
  for (const entry of live) {
    if (entry.state === "awaiting_ci")
      await failures.isolate(`CI of #${entry.number}`, [], () => reconcileCi(context, entry));
  }
  // A lost push or CI webhook of a person's pull request: its review still comes after CI's verdict.
  // Its failure (the catalog unreadable) is logged: it holds up none of the cycle's other recoveries.
  report.reviews = await reviewPeoplesPulls(env, project, forge, null).then(
    (runs) => runs.length,
    (error: unknown) => {
      log.warn("people's reviews not reconciled", { project: project.id, error: errorMessage(error) });
      return 0;
    },
  );
  report.failed = failures.count;
  const held = afterFailures(start, listing, forgeTime, heldAt, failures.numbers);
  if (held.givenUp.length > 0)
    log.warn("reconciliation gave up on items until they change", {
      project: project.id,
      items: held.givenUp,
    });
  return { report, cursor: held.next };
}

type Context = {
  env: Env;
  project: Project;
  cause: Cause;
  forges: Forges;
  forge: ForgeClient;
  report: CycleReport;
};

/**
 * Part of the fingerprint: what a change of an issue can change (the comment count catches a reply). A review
 * changes none of it, only a pull request's time: a pull request's time is part of its fingerprint.
 */
const listedItem = (item: UpdatedIssue) => ({
  item,
  number: item.number,
  updatedAt: item.updatedAt,
  fingerprint: JSON.stringify([
    item.state,
    [...item.labels].sort(),
    item.title,
    item.body,
    item.comments,
    ...(item.isPullRequest ? [item.updatedAt] : []),
  ]),
});

/** The lost `labeled`, `closed` and `edited` webhooks of one changed issue. */
async function reconcileIssue(
  context: Context,
  issue: MirroredIssue,
  state: string | undefined,
  { author, updatedAt }: { author: string; updatedAt: string },
) {
  const { env, project, cause, forges, forge, report } = context;
  const live = state !== undefined && !TERMINAL_STATES.includes(state as State);
  // Per occurrence: a second close (after a reopening) is another event, not a duplicate of the first.
  const closedId = `cron:closed:${issue.number}:${updatedAt}`;
  if (issue.state === "closed") {
    if (live) {
      await sendEvent(env, project, issue.number, closedId, cause, { type: "issue_closed" });
      report.settled++;
    }
    // A closed dependency frees the issues waiting on it.
    report.regated += await regateDependents(env, project, issue.number, closedId, cause, forges);
    return;
  }
  if (state === undefined) {
    // Who added the label is not in the listing: only a writer's own issue is queued here; anyone else's
    // waits for the labelled webhook, whose sender is known.
    if (!wantsWork(project, issue)) return;
    const brief = (await canCommand(forge, author))
      ? { title: issue.title, body: issue.body, by: author }
      : undefined;
    const id = `cron:triage:${issue.number}:${updatedAt}`;
    if (await triage(env, project, issue, state, id, cause, forges, undefined, brief)) report.dispatched++;
  } else if (state === "blocked" && (await regateIfChanged(context, issue))) {
    report.regated++;
  }
}

/** Re-gates a blocked issue whose gate moved; the id names the DO's last edge, so a rerun is a duplicate. */
async function regateIfChanged(
  { env, project, cause, forges }: Context,
  issue: MirroredIssue,
): Promise<boolean> {
  if (!wantsWork(project, issue)) return false;
  const view = await issueStub(env, project.id, issue.number).view();
  if (!view) return false;
  const gate = await gateFor(env, project, issue, view.brief?.body ?? issue.body, forges);
  const inCycle = view.reason?.startsWith("dependency cycle") ?? false;
  if (gate.blockers.join(",") === view.blockers.join(",") && Boolean(gate.cycle) === inCycle) return false;
  const id = `cron:regate:${issue.number}:${view.history.at(-1)?.seq ?? 0}`;
  await sendEvent(env, project, issue.number, id, cause, { type: "triage", ...gate });
  return true;
}

/** The lost `pull_request closed` (or merged) webhook of a live issue's own pull request. */
async function reconcilePull(
  { env, project, cause, forge, report }: Context,
  owner: LiveIssue,
  number: number,
) {
  const pull = await forge.getPullRequest(number);
  if (pull.state !== "closed") return;
  // The index names it as the issue's own pull request: the one Conveyor opened for it.
  const event = pullRequestLifecycle(false, pull, { number, byConveyor: true });
  const id = `cron:pr:${number}:${pull.merged ? "merged" : "closed"}:pr:${owner.number}`;
  await sendEvent(env, project, owner.number, id, cause, event);
  report.pulls++;
}

/** The lost CI webhook: the verdict read back from the forge, as the webhook route reads it. */
async function reconcileCi({ env, project, cause, forge, report }: Context, entry: LiveIssue) {
  const { number, headSha } = entry;
  if (!headSha) return;
  const result = await readCi(env, project, forge, number, headSha);
  if (!result) return;
  // The wait's own time in the id: a revise that pushed no new commit waits on the same sha again.
  const id = `cron:ci:${number}:${headSha}:${entry.updatedAt}`;
  await sendEvent(env, project, number, id, cause, result);
  report.ci++;
}

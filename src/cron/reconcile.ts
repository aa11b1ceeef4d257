/**
 * Reconciliation, once a minute per project: whatever a lost webhook failed to tell Conveyor, the forge's
 * own state tells it here, so a lost delivery delays work by at most one cron period. Every event id is
 * derived from what it reconciles, so a second run over the same state changes nothing.
 */
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import { canCommand } from "../hooks/route-comment.ts";
import { issueStub } from "../issue-stub.ts";
import { triage, wantsWork } from "../projects/dispatch.ts";
import { gateFor, toMirrored } from "../projects/gate.ts";
import { sendEvent } from "../projects/lifecycle-client.ts";
import { lifecycleStates, type MirroredIssue, mirroredIssues, mirrorIssue } from "../projects/mirror.ts";
import { lazyForges, listProjects, type Project } from "../projects/store.ts";
import { liveTrackedIssues } from "./tracked.ts";

export type ReconcileReport = {
  project: string;
  dispatched: number;
  regated: number;
  settled: number;
  error?: string;
};

export async function reconcileAll(env: Env): Promise<ReconcileReport[]> {
  const reports: ReconcileReport[] = [];
  for (const project of await listProjects(env)) {
    try {
      reports.push(await reconcileProject(env, project));
    } catch (error) {
      // One unreachable forge must not stop the others.
      const message = errorMessage(error);
      reports.push({ project: project.id, dispatched: 0, regated: 0, settled: 0, error: message });
    }
  }
  return reports;
}

export async function reconcileProject(env: Env, project: Project): Promise<ReconcileReport> {
  const forges = lazyForges(env, project);
  const forge = await forges();
  const cause = { kind: "cron" as const, id: new Date().toISOString() };
  const report: ReconcileReport = { project: project.id, dispatched: 0, regated: 0, settled: 0 };

  const listed = await forge.listIssuesByLabel(project.settings.labels.backlog, "open");
  const backlog = listed.map((i) => toMirrored(project, i));
  const authors = new Map(listed.map((i) => [i.number, i.author]));
  for (const issue of backlog) await mirrorIssue(env, project.id, issue);
  await refreshDependencies(env, project, backlog, forges);
  const states = await lifecycleStates(
    env,
    project.id,
    backlog.map((i) => i.number),
  );

  for (const issue of backlog) {
    const state = states.get(issue.number);
    if (state === undefined) {
      // Who added the label is not in the listing: only a writer's own issue is queued here; anyone else's
      // waits for the labelled webhook, whose sender is known.
      const author = authors.get(issue.number) ?? "";
      const brief = (await canCommand(forge, author))
        ? { title: issue.title, body: issue.body, by: author }
        : undefined;
      const id = `cron:triage:${issue.number}`;
      if (await triage(env, project, issue, state, id, cause, forges, undefined, brief)) report.dispatched++;
    } else if (state === "blocked" && (await regateIfChanged(env, project, issue, cause, forges))) {
      report.regated++;
    }
  }

  // Live lifecycles whose issue is no longer open in the backlog: settle the ones closed on the forge.
  const open = new Set(backlog.map((i) => i.number));
  for (const number of await liveTrackedIssues(env, project.id)) {
    if (open.has(number)) continue;
    const current = await forge.getIssue(number);
    if (current.state !== "closed") continue;
    await mirrorIssue(env, project.id, toMirrored(project, current));
    await sendEvent(env, project, number, `cron:closed:${number}`, cause, { type: "issue_closed" });
    report.settled++;
  }
  return report;
}

/** Dependencies still open in the mirror are read from the forge: their closed webhook may have been lost. */
async function refreshDependencies(
  env: Env,
  project: Project,
  backlog: MirroredIssue[],
  forges: ReturnType<typeof lazyForges>,
) {
  const deps = [...new Set(backlog.flatMap((i) => i.dependsOn))];
  const forge = await forges();
  for (const dep of await mirroredIssues(env, project.id, deps)) {
    if (dep.state !== "open") continue;
    const current = await forge.getIssue(dep.number);
    if (current.state === "closed") await mirrorIssue(env, project.id, toMirrored(project, current));
  }
}

/** Re-gates a blocked issue whose gate moved; the id names the DO's last edge, so a rerun is a duplicate. */
async function regateIfChanged(
  env: Env,
  project: Project,
  issue: MirroredIssue,
  cause: { kind: "cron"; id: string },
  forges: ReturnType<typeof lazyForges>,
): Promise<boolean> {
  if (!wantsWork(project, issue)) return false;
  const view = await issueStub(env, project.id, issue.number).view();
  if (!view) return false;
  const gate = await gateFor(env, project, issue, forges);
  const inCycle = view.reason?.startsWith("dependency cycle") ?? false;
  if (gate.blockers.join(",") === view.blockers.join(",") && Boolean(gate.cycle) === inCycle) return false;
  const id = `cron:regate:${issue.number}:${view.history.at(-1)?.seq ?? 0}`;
  await sendEvent(env, project, issue.number, id, cause, { type: "triage", ...gate });
  return true;
}

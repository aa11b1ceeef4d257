/**
 * The factory's watchdog, from the cron (docs/supervisor.md#the-watchdog): it reads each ProjectDO's pulse —
 * when its alarm last ran, when its reconciliation last completed — and reports to the AlertDO the projects
 * that stopped (src/domain/watchdog.ts decides), one source per project, so a project that recovers resolves
 * its alerts and one not looked at this turn keeps them; a deleted project's are resolved. It runs every few minutes, over a window of the
 * projects that leaves the cron's arming room within the platform's subrequest limit.
 */
import { alertStub } from "../alert-stub.ts";
import { type SourceReport, watchdogSource } from "../domain/alerts.ts";
import { armingTurn } from "../domain/reconciliation.ts";
import { type Watched, watchdogAlerts } from "../domain/watchdog.ts";
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import { projectStub } from "../project-stub.ts";
import { listProjects } from "../projects/store.ts";

/** The watchdog looks on every this many minutes' cron. */
export const WATCH_EVERY_MINUTES = 5;
/** Projects per look: with the cron's arming (at most 500), well under 1 000 subrequests. */
const WATCH_WINDOW = 400;

/** Looks at the projects of this turn and reports them; the alerts that opened and resolved. */
export async function watchFactory(env: Env, now = Date.now()) {
  const turn = Math.floor(now / (WATCH_EVERY_MINUTES * 60_000));
  const registered = await listProjects(env);
  const projects = armingTurn(registered, turn, WATCH_WINDOW);
  const reports = await Promise.all(
    projects.map(async (project): Promise<SourceReport> => {
      const watched: Omit<Watched, "pulse"> = {
        project: project.id,
        supervisorPeriodMs: project.settings.supervisor.periodMs,
        reconcilePeriodMs: project.settings.reconcile.periodMs,
      };
      const pulse = await projectStub(env, project.id)
        .health()
        .then((health) => health.pulse)
        .catch((error: unknown) => ({ error: errorMessage(error) }));
      return { source: watchdogSource(project.id), alerts: watchdogAlerts({ ...watched, pulse }, now) };
    }),
  );
  // A look at every project also retires the watchdog's alerts of projects deleted since.
  const all = projects.length === registered.length;
  const retire = all ? { prefix: watchdogSource(""), keep: reports.map((r) => r.source) } : undefined;
  return alertStub(env).report(reports, retire);
}

/** Whether this minute's cron looks. */
export const watchesAt = (now: number) => Math.floor(now / 60_000) % WATCH_EVERY_MINUTES === 0;

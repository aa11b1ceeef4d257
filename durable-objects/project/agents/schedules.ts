/**
 * The ProjectDO's agent schedules, from the object's one alarm: when a check is due, the project's catalog is
 * read from its repository, and each enabled scheduled agent gets one run when a scheduled time has passed
 * since its last (src/agents/schedule.ts). However many times passed, that is one run; and an agent whose
 * last run still waits in the queue gets none more, so runners down for a day find one run, not 24.
 */
import type { AgentDefinition } from "../../../src/agents/definition.ts";
import { loadCatalog } from "../../../src/agents/runs.ts";
import { scheduleDecision } from "../../../src/agents/schedule.ts";
import type { ScheduleCheck } from "../../../src/contracts/project-object.ts";
import type { Env } from "../../../src/env.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { log } from "../../../src/log.ts";
import { loadRegistered, type Project } from "../../../src/projects/store.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS agent_schedule_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  project TEXT NOT NULL,
  check_at INTEGER
);
CREATE TABLE IF NOT EXISTS agent_schedule (
  agent TEXT PRIMARY KEY,
  last INTEGER NOT NULL
);
`;
/**
 * The catalog is read again at least this often, even when no agent's time comes sooner: a definition
 * added or changed on the default branch is picked up within it.
 */
export const CATALOG_REFRESH_MS = 60 * 60_000;
/** A check that failed (forge down, project unreadable) tries again after this. */
const RETRY_MS = 5 * 60_000;

export type ScheduleHooks = {
  /** Whether the agent's last run still waits for a runner. */
  waiting(agent: string): boolean;
  /** Queues one run. */
  queue(project: Project, definition: AgentDefinition, trigger: string): Promise<void>;
};

export class AgentSchedules {
  private running: Promise<ScheduleCheck | null> | null = null;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** Makes sure a check is scheduled for `project` (now, when none is). Cheap: no forge, no D1. */
  arm(project: string, now: number): number {
    const row = this.state();
    if (row?.check_at != null) return row.check_at;
    this.sql.exec(
      `INSERT INTO agent_schedule_state (id, project, check_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET check_at = excluded.check_at`,
      project,
      now,
    );
    return now;
  }

  nextAt(): number | null {
    return this.state()?.check_at ?? null;
  }

  /** Checks when due (or when `force`d); one check at a time, a due check during a run joins it. */
  runIfDue(env: Env, now: number, hooks: ScheduleHooks, force = false): Promise<ScheduleCheck | null> {
    if (this.running) return this.running;
    const row = this.state();
    if (!row || (!force && (row.check_at === null || row.check_at > now))) return Promise.resolve(null);
    // Claimed before the check starts: an object evicted mid-check checks again later, not in a loop now.
    this.sql.exec("UPDATE agent_schedule_state SET check_at = ? WHERE id = 1", now + RETRY_MS);
    this.running = this.check(env, row.project, now, hooks).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async check(
    env: Env,
    projectId: string,
    now: number,
    hooks: ScheduleHooks,
  ): Promise<ScheduleCheck> {
    try {
      const registered = await loadRegistered(env, projectId);
      if (!registered) {
        // Deleted: nothing keeps the alarm for it.
        this.sql.exec("DELETE FROM agent_schedule_state");
        return { queued: [] };
      }
      const catalog = await loadCatalog(registered);
      const queued: string[] = [];
      let next = now + CATALOG_REFRESH_MS;
      for (const agent of catalog.agents) {
        if (!agent.enabled || !agent.schedule) continue;
        const decision = scheduleDecision(agent.schedule, this.last(agent.name), now);
        if (decision.run && !hooks.waiting(agent.name)) {
          await hooks.queue(registered.project, agent, `schedule ${agent.schedule}`);
          queued.push(agent.name);
        }
        this.sql.exec(
          `INSERT INTO agent_schedule (agent, last) VALUES (?, ?)
           ON CONFLICT (agent) DO UPDATE SET last = excluded.last`,
          agent.name,
          decision.last,
        );
        if (decision.next !== null) next = Math.min(next, decision.next);
      }
      this.sql.exec("UPDATE agent_schedule_state SET check_at = ? WHERE id = 1", next);
      return { queued };
    } catch (error) {
      // The claim above already set the retry.
      const outcome = { error: errorMessage(error) };
      log.warn("agent schedules not checked", { project: projectId, ...outcome });
      return outcome;
    }
  }

  private last(agent: string): number | null {
    const row = this.sql
      .exec<{ last: number }>("SELECT last FROM agent_schedule WHERE agent = ?", agent)
      .toArray()[0];
    return row?.last ?? null;
  }

  private state(): { project: string; check_at: number | null } | undefined {
    return this.sql
      .exec<{ project: string; check_at: number | null }>(
        "SELECT project, check_at FROM agent_schedule_state WHERE id = 1",
      )
      .toArray()[0];
  }
}

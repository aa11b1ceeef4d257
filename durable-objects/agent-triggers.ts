/**
 * The ProjectDO's forge-event triggers: a webhook event starts one run of each repository agent whose `on`
 * names it (src/agents/triggers.ts), read from the object's cached catalog rather than the forge. The run's
 * id derives from the delivery, so a redelivered webhook queues nothing new; and events of Conveyor's own
 * account start nothing, so an agent's comment never starts a comment agent.
 */
import type { Catalog } from "../src/agents/catalog.ts";
import { agentRunRequest, eventRunId, loadCatalog } from "../src/agents/runs.ts";
import { type AgentTrigger, triggeredAgents, triggerText } from "../src/agents/triggers.ts";
import { sameLogin } from "../src/domain/logins.ts";
import type { Env } from "../src/env.ts";
import { conveyorAccount } from "../src/projects/account.ts";
import { loadRegistered, type Project } from "../src/projects/store.ts";
import { AgentCatalogCache } from "./agent-catalog-cache.ts";
import type { AgentRunRequest, AgentRuns } from "./agent-runs.ts";

export class AgentTriggers {
  readonly catalog: AgentCatalogCache;

  constructor(
    sql: SqlStorage,
    private readonly runs: AgentRuns,
  ) {
    this.catalog = new AgentCatalogCache(sql);
  }

  /** Queues (through `start`) the runs `trigger` starts; returns their ids, none for a redelivery. */
  async trigger(
    env: Env,
    project: Project,
    trigger: AgentTrigger,
    deliveryId: string,
    start: (request: AgentRunRequest) => Promise<unknown>,
  ): Promise<string[]> {
    const catalog = await this.catalog.get(() => readCatalog(env, project.id), Date.now());
    const agents = triggeredAgents(catalog, trigger.event);
    if (agents.length === 0) return [];
    if (sameLogin(trigger.sender, await conveyorAccount(env, project))) return [];
    const queued: string[] = [];
    for (const agent of agents) {
      const runId = await eventRunId(project.id, deliveryId, agent.name);
      // Known already: a redelivery. Two copies in flight at once still queue one: the job key is the run id.
      if (this.runs.view(runId)) continue;
      const event = { runId, subject: trigger.subject };
      await start(await agentRunRequest(env, project, agent, triggerText(trigger), event));
      queued.push(runId);
    }
    return queued;
  }
}

async function readCatalog(env: Env, projectId: string): Promise<Catalog> {
  const registered = await loadRegistered(env, projectId);
  if (!registered) throw new Error(`project ${projectId} is not registered`);
  return loadCatalog(registered);
}

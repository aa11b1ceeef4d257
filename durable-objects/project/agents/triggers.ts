/**
 * The ProjectDO's forge-event triggers: a webhook event starts one run of each repository agent whose `on`
 * names it (src/agents/triggers.ts), read from the object's cached catalog rather than the forge. The run's
 * id derives from the delivery, so a redelivered webhook queues nothing new; and events of Conveyor's own
 * account start nothing, so an agent's comment never starts a comment agent.
 */

import type { Catalog } from "../../../src/agents/catalog.ts";
import type { AgentDefinition } from "../../../src/agents/definition.ts";
import { humanReview, REVIEWER, type ReviewRun } from "../../../src/agents/review-run.ts";
import { agentRunRequest, eventRunId, loadCatalog } from "../../../src/agents/runs.ts";
import {
  type AgentTrigger,
  type EventSubject,
  triggeredAgents,
  triggerText,
} from "../../../src/agents/triggers.ts";
import type { AgentRunRequest } from "../../../src/contracts/project-object.ts";
import { sameLogin } from "../../../src/domain/logins.ts";
import type { Env } from "../../../src/env.ts";
import { conveyorAccount } from "../../../src/projects/account.ts";
import { clientOf, loadRegistered, type Project } from "../../../src/projects/store.ts";
import { AgentCatalogCache } from "./catalog-cache.ts";
import type { AgentRuns } from "./runs.ts";

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
    const builtins = project.settings.critic.reviewHumanPullRequests ? [REVIEWER] : [];
    const agents = triggeredAgents(catalog, trigger.event, builtins);
    if (agents.length === 0) return [];
    const account = await conveyorAccount(env, project);
    if (sameLogin(trigger.sender, account)) return [];
    const queued: string[] = [];
    for (const agent of agents) {
      const runId = await eventRunId(project.id, deliveryId, agent.name);
      // Known already: a redelivery. Two copies in flight at once still queue one: the job key is the run id.
      if (this.runs.view(runId)) continue;
      const review = await reviewOf(env, project, account, agent, trigger.subject, runId);
      if (review === "skip") continue;
      const event = { runId, subject: trigger.subject };
      await start(await agentRunRequest(env, project, agent, triggerText(trigger), event, review));
      queued.push(runId);
    }
    return queued;
  }
}

/**
 * An agent that submits reviews, run on a pull request's event, reviews that pull request at its head, a
 * person's: Conveyor's own pull requests (pushed to by its runner's account) are the critic's, reviewed
 * through their issues (`skip`).
 */
async function reviewOf(
  env: Env,
  project: Project,
  account: string,
  agent: AgentDefinition,
  subject: EventSubject,
  runId: string,
): Promise<ReviewRun | undefined | "skip"> {
  if (!agent.outputs.submit_review || subject.kind !== "pull_request") return undefined;
  if (sameLogin(subject.author, account)) return "skip";
  const registered = await loadRegistered(env, project.id);
  if (!registered) throw new Error(`project ${project.id} is not registered`);
  return humanReview(clientOf(env, registered.project, await registered.secrets()), runId, subject);
}

async function readCatalog(env: Env, projectId: string): Promise<Catalog> {
  const registered = await loadRegistered(env, projectId);
  if (!registered) throw new Error(`project ${projectId} is not registered`);
  return loadCatalog(registered);
}

/**
 * A push to the default branch that changed `.conveyor/agents/`: the project's Durable Object forgets its
 * cached agent catalog, so the next event reads the new definitions (durable-objects/project/agents/catalog-cache.ts).
 * Conveyor reads nothing else from a push; the webhook parser leaves it `ignored`.
 */
import { pushTouchesAgents } from "../agents/push.ts";
import type { Env } from "../env.ts";
import { projectStub } from "../project-stub.ts";
import type { Project } from "../projects/store.ts";

export async function routePush(env: Env, project: Project, body: Uint8Array): Promise<void> {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return;
  }
  const { repo, settings } = project;
  if (pushTouchesAgents({ repo, defaultBranch: settings.defaultBranch }, json))
    await projectStub(env, project.id).forgetAgentCatalog();
}

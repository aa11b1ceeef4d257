/**
 * Conveyor's own account on a project's forge: the forge token's user (`GET /user`), asked once per isolate
 * and registration (re-registering may change the token). Its comments and pull requests are the only ones
 * Conveyor takes as its own.
 */
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { Poster } from "../forge/comment-once.ts";
import { postPolicy } from "../forge/post/project-policy.ts";
import { IsolateCache } from "../isolate-cache.ts";
import { forgeClientFor, type Project } from "./store.ts";

// Only a login already read is shared (src/isolate-cache.ts): no object awaits another's request in flight.
const accounts = new IsolateCache<{ updatedAt: number; login: string }>();

export async function conveyorAccount(env: Env, project: Project): Promise<string> {
  const { login } = await accounts.get(
    project.id,
    async () => {
      const login = await (await forgeClientFor(env, project)).getAuthenticatedUser();
      return { updatedAt: project.updatedAt, login };
    },
    ({ value }) => value.updatedAt === project.updatedAt,
  );
  return login;
}

/** Conveyor as the poster of its own words on the project's forge, with the project's post policy. */
export async function conveyorPoster(env: Env, project: Project, forge: ForgeClient): Promise<Poster> {
  return {
    forge,
    account: await conveyorAccount(env, project),
    secretsKey: env.CONVEYOR_SECRETS_KEY,
    policy: postPolicy(project),
    issueAuthor: project.settings.mentions.issueAuthor,
  };
}

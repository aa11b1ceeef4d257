/**
 * Conveyor's own account on a project's forge: the forge token's user (`GET /user`), asked once per isolate
 * and registration (re-registering may change the token). Its comments and pull requests are the only ones
 * Conveyor takes as its own.
 */
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { Poster } from "../forge/comment-once.ts";
import { postPolicy } from "../forge/post/project-policy.ts";
import { forgeClientFor, type Project } from "./store.ts";

type Entry = { updatedAt: number; login: Promise<string> };
const accounts = new Map<string, Entry>();

export function conveyorAccount(env: Env, project: Project): Promise<string> {
  const hit = accounts.get(project.id);
  if (hit && hit.updatedAt === project.updatedAt) return hit.login;
  const entry: Entry = {
    updatedAt: project.updatedAt,
    login: forgeClientFor(env, project).then((forge) => forge.getAuthenticatedUser()),
  };
  // A failed lookup is not remembered.
  entry.login.catch(() => {
    if (accounts.get(project.id) === entry) accounts.delete(project.id);
  });
  accounts.set(project.id, entry);
  return entry.login;
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

import { z } from "zod";
import { accessMode, atLeast } from "../auth.ts";
import { ApiError, json, notFound, parseBody, type Reply } from "../http.ts";
import { collaboratorLevel } from "../state.ts";
import { setCollaborator } from "../store.ts";
import type { ApiContext, RepoContext } from "./context.ts";
import { requireMode } from "./context.ts";
import { githubMergeSettings } from "./protection.ts";

const collaboratorOption = z.object({ permission: collaboratorLevel.optional() });

export function getCurrentUser(ctx: ApiContext): Reply {
  return json(200, ctx.forge.render.user(ctx.doer));
}

/** Gitea's Repository; a GitHub client also gets GitHub's names of the merge settings. */
export function getRepo(ctx: RepoContext): Reply {
  const repo = ctx.forge.render.repo(ctx.repo, ctx.mode);
  return json(200, ctx.dialect === "github" ? { ...repo, ...githubMergeSettings(ctx.repo) } : repo);
}

/**
 * A user's access mode as Gitea names it (`owner`, `admin`, `write`, `read`, `none`). Site admins and
 * repository admins may ask about anyone, others only about themselves (403); unknown users are a 404.
 */
export function getPermission(ctx: RepoContext): Reply {
  const login = ctx.params.collaborator ?? "";
  const self = ctx.doer.login.toLowerCase() === login.toLowerCase();
  if (!self && !atLeast(ctx.mode, "admin")) {
    throw new ApiError(
      403,
      "Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own",
    );
  }
  const user = ctx.forge.store.userByLogin(login);
  if (!user) throw notFound(`user does not exist [uid: 0, name: ${login}]`);
  const permission = accessMode(user, ctx.repo);
  return json(200, { permission, role_name: permission, user: ctx.forge.render.user(user) });
}

/** PUT: adds or changes a collaborator (default permission write); 204. */
export function putCollaborator(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const { permission = "write" } = parseBody(collaboratorOption, ctx.body);
  const user = ctx.forge.store.userByLogin(ctx.params.collaborator ?? "");
  if (!user) throw new ApiError(422, `user does not exist [name: ${ctx.params.collaborator}]`);
  setCollaborator(ctx.repo, user, permission);
  return { status: 204 };
}

import { z } from "zod";
import { ApiError, json, notFound, parseBody, type Reply } from "../http.ts";
import { type Hook, hookType } from "../state.ts";
import { intParam, type RepoContext, requireMode } from "./context.ts";

const createHookOption = z.object({
  type: z.string(),
  config: z.record(z.string(), z.string()),
  events: z.array(z.string()).optional(),
  active: z.boolean().optional(),
});

export function listHooks(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  return json(
    200,
    ctx.repo.hooks.map((hook) => ctx.forge.render.hook(hook)),
  );
}

/**
 * Repository admins only. Type `forgejo` or `gitea`, config `url`, `content_type` json (form is not
 * supported) and optional `secret`; no events means `["push"]`, and like Gitea's API a hook is inactive
 * unless `active: true` is sent.
 */
export function createHook(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const input = parseBody(createHookOption, ctx.body);
  const type = hookType.safeParse(input.type);
  if (!type.success) throw new ApiError(422, "Invalid hook type");
  if (input.config.content_type !== "json") throw new ApiError(422, "Invalid content type");
  const url = input.config.url;
  if (!url) throw new ApiError(422, "Missing config option: url");
  const now = ctx.forge.store.now();
  const hook: Hook = {
    id: ctx.forge.store.nextId(),
    type: type.data,
    url,
    secret: input.config.secret ?? "",
    events: input.events?.length ? input.events : ["push"],
    active: input.active ?? false,
    createdAt: now,
    updatedAt: now,
  };
  ctx.repo.hooks.push(hook);
  return json(201, ctx.forge.render.hook(hook));
}

export function deleteHook(ctx: RepoContext): Reply {
  requireMode(ctx, "admin");
  const id = intParam(ctx, "id");
  if (!ctx.repo.hooks.some((hook) => hook.id === id)) throw notFound();
  ctx.repo.hooks = ctx.repo.hooks.filter((hook) => hook.id !== id);
  return { status: 204 };
}

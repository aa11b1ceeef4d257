/**
 * Who may use the dashboard, and which requests may change anything. Reads need a principal: a verified
 * Cloudflare Access identity (when Access is configured) or a signed session cookie. Every POST must come
 * from our own origin and carry the principal's CSRF token in the form.
 */
import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { z } from "zod";
import { tokenMatches } from "../api/auth.ts";
import { zodMessage } from "../validation.ts";
import { accessConfig, accessIdentity } from "./access.ts";
import { type DashboardContext, type DashboardEnv, type Principal, SESSION_COOKIE } from "./context.ts";
import { errorPage } from "./render.tsx";
import { csrfToken, readSession } from "./session.ts";

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/** Browsers send Origin with every POST; Sec-Fetch-Site covers a request without (a sibling subdomain too). */
export const sameOrigin: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (SAFE_METHODS.has(c.req.method)) return next();
  const origin = c.req.header("origin");
  const site = c.req.header("sec-fetch-site");
  const foreign = origin
    ? origin !== new URL(c.req.url).origin
    : site !== undefined && site !== "same-origin";
  if (foreign) return errorPage(c, 403, "cross-origin request refused");
  await next();
};

async function principalOf(c: DashboardContext, adminToken: string): Promise<Principal | null | "invalid"> {
  const access = accessConfig(c.env);
  if (access && c.req.header("cf-access-jwt-assertion")) {
    const identity = await accessIdentity(c.req.raw.headers, access);
    return identity ? { id: `access:${identity.sub}`, name: identity.email } : "invalid";
  }
  const session = await readSession(adminToken, getCookie(c, SESSION_COOKIE));
  return session && { id: session.id, name: "operator" };
}

export const requireOperator: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  const adminToken = c.env.CONVEYOR_ADMIN_TOKEN;
  if (!adminToken) return errorPage(c, 503, "CONVEYOR_ADMIN_TOKEN is not configured");
  const principal = await principalOf(c, adminToken);
  if (principal === "invalid") return errorPage(c, 403, "the Cloudflare Access assertion is not valid");
  if (!principal) {
    if (!SAFE_METHODS.has(c.req.method)) return errorPage(c, 403, "not signed in");
    const url = new URL(c.req.url);
    return c.redirect(`/dashboard/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
  }
  c.set("principal", principal);
  c.set("csrf", await csrfToken(adminToken, principal.id));
  await next();
};

type FormResult<T> = { ok: true; data: T } | { ok: false; response: Response };

/** The POSTed form, refused unless it carries the principal's CSRF token, then parsed with `schema`. */
export async function csrfForm<S extends z.ZodType>(
  c: DashboardContext,
  schema: S,
): Promise<FormResult<z.output<S>>> {
  const form = await c.req.parseBody();
  const given = typeof form.csrf === "string" ? form.csrf : "";
  if (!(await tokenMatches(given, c.get("csrf")))) {
    return {
      ok: false,
      response: await errorPage(c, 403, "the form's CSRF token is missing or stale: reload the page"),
    };
  }
  const parsed = schema.safeParse(form);
  if (!parsed.success) return { ok: false, response: await errorPage(c, 400, zodMessage(parsed.error)) };
  return { ok: true, data: parsed.data };
}

/** What every dashboard handler knows: who is asking, and the CSRF token their forms carry. */
import type { Context } from "hono";
import type { Env } from "../env.ts";

export type Principal = {
  /** A session's nonce, or `access:<sub>` for a Cloudflare Access identity; the CSRF token derives from it. */
  id: string;
  /** Shown in the header and recorded as `by` in the lifecycle events this person sends. */
  name: string;
};

export type DashboardEnv = { Bindings: Env; Variables: { principal: Principal; csrf: string } };
export type DashboardContext = Context<DashboardEnv>;

/** Cookies are scoped to the dashboard; the session one is HttpOnly, Secure and SameSite=Strict. */
export const COOKIE_PATH = "/dashboard";
export const SESSION_COOKIE = "conveyor_session";
export const FLASH_COOKIE = "conveyor_flash";

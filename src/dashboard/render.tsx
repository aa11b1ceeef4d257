/** Renders dashboard pages inside the layout, with the one-shot flash message left by the last action. */
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { COOKIE_PATH, type DashboardContext, FLASH_COOKIE, type Principal } from "./context.ts";
import { Layout } from "./layout.tsx";
import { LIVE_REFRESH_HEADER } from "./live-script.ts";

const cookieOptions = { path: COOKIE_PATH, httpOnly: true, secure: true, sameSite: "Strict" } as const;

/** `live`: the WebSocket path that tells the page its subject changed (it then reloads its content). */
export async function renderPage(
  c: DashboardContext,
  title: string,
  body: Child,
  { status = 200, live }: { status?: ContentfulStatusCode; live?: string } = {},
): Promise<Response> {
  // A live page's refresh renders the page the browser shows already, its flash with it (outside <main>).
  const refresh = c.req.header(LIVE_REFRESH_HEADER) !== undefined;
  const flash = refresh ? null : (getCookie(c, FLASH_COOKIE) ?? null);
  if (flash) deleteCookie(c, FLASH_COOKIE, cookieOptions);
  const principal: Principal | undefined = c.get("principal");
  const page = (
    <Layout
      title={title}
      principal={principal}
      csrf={c.get("csrf")}
      flash={flash}
      live={live}
      now={Date.now()}
    >
      {body}
    </Layout>
  );
  return c.html(html`<!doctype html>${page}`, status);
}

export function errorPage(c: DashboardContext, status: ContentfulStatusCode, message: string) {
  return renderPage(c, status === 404 ? "Not found" : `Error ${status}`, <p class="error">{message}</p>, {
    status,
  });
}

/** A message for the next page this browser loads (after the redirect that follows a form). */
export function setFlash(c: DashboardContext, message: string) {
  setCookie(c, FLASH_COOKIE, message.slice(0, 300), { ...cookieOptions, maxAge: 60 });
}

export function setSessionCookie(c: DashboardContext, name: string, value: string, maxAgeSeconds: number) {
  setCookie(c, name, value, { ...cookieOptions, maxAge: maxAgeSeconds });
}

export function clearCookie(c: DashboardContext, name: string) {
  deleteCookie(c, name, cookieOptions);
}

/** Driving the dashboard from workerd tests: sign in, read the CSRF token off a page, post its forms. */
import { env, SELF } from "cloudflare:test";
import type { State } from "../../src/domain/lifecycle.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { PATHS } from "../support/lifecycle-samples.ts";

export const ORIGIN = "https://conveyor.test";

export async function login(token = env.CONVEYOR_ADMIN_TOKEN ?? "", next?: string): Promise<Response> {
  const form = new URLSearchParams({ token, ...(next ? { next } : {}) });
  return SELF.fetch(`${ORIGIN}/dashboard/login`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    body: form,
    redirect: "manual",
  });
}

/** The `name=value` of the session cookie a successful sign-in sets. */
export async function sessionCookie(): Promise<string> {
  const res = await login();
  const cookie = res.headers.get("set-cookie")?.split(";")[0];
  if (res.status !== 303 || !cookie) throw new Error(`login: ${res.status}`);
  return cookie;
}

export const page = (path: string, cookie?: string, headers: Record<string, string> = {}) =>
  SELF.fetch(`${ORIGIN}${path}`, { headers: { ...(cookie && { cookie }), ...headers }, redirect: "manual" });

export function post(
  path: string,
  cookie: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return SELF.fetch(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { origin: ORIGIN, cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields),
    redirect: "manual",
  });
}

/** The hidden fields of the first form on the page that posts to `action`. */
export function formFields(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action}`);
  const form = html.slice(start, html.indexOf("</form>", start));
  return Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
  );
}

/** Takes a new issue of `project` to `state` through its Durable Object, then flushes it to D1. */
export async function seedIssue(project: string, number: number, state: State) {
  const stub = issueStub(env, project, number);
  for (const [i, event] of PATHS[state].entries()) {
    await stub.apply({ id: `seed-${i}`, project, number, cause: { kind: "system", id: "seed" }, event });
  }
  await stub.drain();
}

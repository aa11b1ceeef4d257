import type { Context, MiddlewareHandler } from "hono";
import { constantTimeEqual } from "../crypto/constant-time.ts";
import type { Env } from "../env.ts";
import { jsonError } from "./errors.ts";

const encoder = new TextEncoder();

/** Hashing first hides the token's length; the byte compare then takes the same time wherever they differ. */
export async function tokenMatches(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  return constantTimeEqual(new Uint8Array(a), new Uint8Array(b));
}

/** The token of `Authorization: Bearer <token>`, or null. */
export const bearerToken = (c: Context): string | null =>
  /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1] ?? null;

export function missingBearer(c: Context) {
  c.header("WWW-Authenticate", 'Bearer realm="conveyor"');
  return jsonError(c, 401, "missing bearer token");
}

/** Operator routes: `Authorization: Bearer <CONVEYOR_ADMIN_TOKEN>`. */
export const operatorAuth: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const expected = c.env.CONVEYOR_ADMIN_TOKEN;
  if (!expected) return jsonError(c, 503, "CONVEYOR_ADMIN_TOKEN is not configured");
  const token = bearerToken(c);
  if (!token) return missingBearer(c);
  if (!(await tokenMatches(token, expected))) return jsonError(c, 401, "invalid operator token");
  await next();
};

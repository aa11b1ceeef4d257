import type { MiddlewareHandler } from "hono";
import type { Env } from "../env.ts";
import { jsonError } from "./errors.ts";

const encoder = new TextEncoder();

/** Compares in time independent of where the inputs differ (hashing first makes the lengths equal). */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  const xs = new Uint8Array(x);
  const ys = new Uint8Array(y);
  let diff = 0;
  for (let i = 0; i < xs.length; i++) diff |= (xs[i] ?? 0) ^ (ys[i] ?? 0);
  return diff === 0;
}

/** Operator routes: `Authorization: Bearer <CONVEYOR_ADMIN_TOKEN>`. */
export const operatorAuth: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const expected = c.env.CONVEYOR_ADMIN_TOKEN;
  if (!expected) return jsonError(c, 503, "CONVEYOR_ADMIN_TOKEN is not configured");
  const header = c.req.header("authorization") ?? "";
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match?.[1]) {
    c.header("WWW-Authenticate", 'Bearer realm="conveyor"');
    return jsonError(c, 401, "missing bearer token");
  }
  if (!(await constantTimeEqual(match[1], expected))) return jsonError(c, 401, "invalid operator token");
  await next();
};

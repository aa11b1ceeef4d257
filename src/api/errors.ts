import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Every error Conveyor answers is JSON with one line saying what is wrong. */
export function jsonError(c: Context, status: ContentfulStatusCode, message: string) {
  return c.json({ error: message.split("\n")[0] }, status);
}

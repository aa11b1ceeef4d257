import type { Context } from "hono";
import type { z } from "zod";
import { readLimited } from "../hooks/body.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";

/** Room for the largest valid request (100 runner events of 10 000 characters). */
const MAX_JSON_BYTES = 2 * 1024 * 1024;

/** The request's JSON body parsed with `schema` (an empty body is `{}`), or the error to answer instead. */
export async function jsonBody<S extends z.ZodType>(
  c: Context,
  schema: S,
): Promise<{ ok: true; data: z.output<S> } | { ok: false; response: Response }> {
  const bytes = await readLimited(c.req.raw, MAX_JSON_BYTES);
  if (!bytes) return { ok: false, response: jsonError(c, 413, "body exceeds 2 MiB") };
  const text = new TextDecoder().decode(bytes);
  let raw: unknown;
  try {
    raw = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { ok: false, response: jsonError(c, 400, "body must be JSON") };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, response: jsonError(c, 400, zodMessage(parsed.error)) };
  return { ok: true, data: parsed.data };
}

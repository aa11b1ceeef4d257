import type { z } from "zod";
import { errorMessage } from "../../error-message.ts";

/** A delivery that can never be processed as sent: answer `status` with `message`, store nothing. */
export class WebhookError extends Error {
  override readonly name = "WebhookError";
  readonly status = 400;
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The body as a JSON object; anything else (invalid UTF-8, truncated JSON, a bare array) is a 400. */
export function decodeJsonObject(rawBody: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(rawBody));
  } catch (error) {
    throw new WebhookError(`malformed JSON body: ${oneLine(errorMessage(error))}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new WebhookError("malformed JSON body: expected an object");
  }
  return value as Record<string, unknown>;
}

/**
 * Validates `value` against `schema` and returns its output, or throws a one-line WebhookError naming the
 * first failing field, e.g.
 * `pull_request payload: pull_request.head.sha: expected string, received undefined`.
 */
export function parsePayload<S extends z.ZodType>(eventName: string, schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const [first, ...rest] = result.error.issues;
  const path = first === undefined || first.path.length === 0 ? "(root)" : first.path.map(String).join(".");
  const message = oneLine((first?.message ?? "invalid").replace(/^Invalid input: /, ""));
  const more = rest.length > 0 ? ` (+${rest.length} more)` : "";
  throw new WebhookError(`${eventName} payload: ${path}: ${message}${more}`);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";

/** What an API handler answers: JSON (`json`), plain text (`text`), or no body. */
export interface Reply {
  status: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

export function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return { status, json: value, headers };
}

/** An API error, answered as Gitea does: `{"message", "url"}` (plus `errors` for a 404). */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly errors: string[] | undefined;

  constructor(status: number, message: string, errors?: string[]) {
    super(message);
    this.status = status;
    this.errors = errors;
  }
}

export function notFound(...errors: string[]): ApiError {
  return new ApiError(404, "The target couldn't be found.", errors);
}

/** Parses a request body like Gitea's binding: unknown fields are ignored, the first problem is a 422. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const field = issue?.path.map(String).join(".") || "body";
  throw new ApiError(422, `[${field}]: ${issue?.message ?? "invalid"}`);
}

/**
 * JSON as Go's encoder writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. Webhook bodies are indented by
 * two spaces (json.MarshalIndent), API answers are compact and end with a newline (json.Encoder).
 */
export function goJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[<>&\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function send(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = { ...reply.headers };
  let body = "";
  if (reply.json !== undefined) {
    headers["Content-Type"] = "application/json;charset=utf-8";
    body = `${goJson(reply.json)}\n`;
  } else if (reply.text !== undefined) {
    headers["Content-Type"] ??= "text/plain;charset=utf-8";
    body = reply.text;
  }
  res.writeHead(reply.status, headers);
  res.end(body);
}

export function errorReply(error: ApiError, swaggerUrl: string): Reply {
  const body: Record<string, unknown> = { message: error.message, url: swaggerUrl };
  if (error.status === 404) body.errors = error.errors?.length ? error.errors : null;
  return json(error.status, body);
}

/** The operator API as the CLI sees it: every answer is parsed with zod, every failure is one line. */
import type { z } from "zod";
import { zodMessage } from "../src/validation.ts";
import { errorSchema } from "./schemas.ts";

/** A failure to report on one line, and the exit code it ends the CLI with. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** What the API answered on failure: its one-line `error`, or the start of whatever it sent. */
function failure(status: number, text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const parsed = errorSchema.safeParse(body);
  const reason = parsed.success ? parsed.data.error : text.split("\n")[0]?.slice(0, 200) || "no body";
  return `${reason} (HTTP ${status})`;
}

export class OperatorApi {
  private readonly base: string;
  private readonly token: string;

  constructor(url: string, token: string) {
    this.base = `${url.replace(/\/+$/, "")}/api/v1`;
    this.token = token;
  }

  async call<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    body?: unknown,
  ): Promise<z.output<S>> {
    return (await this.request(method, path, schema, body)).data;
  }

  /** The answer with its status, for callers that tell 200 from 201. */
  async request<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    body?: unknown,
  ): Promise<{ status: number; data: z.output<S> }> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(120_000),
      });
    } catch (error) {
      const cause =
        error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : error;
      throw new CliError(`cannot reach ${this.base}: ${cause}`);
    }
    const text = await res.text();
    if (!res.ok) throw new CliError(failure(res.status, text));
    let json: unknown = null;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      throw new CliError(`${method} ${path} answered ${res.status} with a body that is not JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new CliError(`unexpected answer to ${method} ${path}: ${zodMessage(parsed.error)}`);
    return { status: res.status, data: parsed.data };
  }
}

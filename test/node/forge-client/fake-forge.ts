import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the forge saw it. `path` is relative to the API prefix. */
export interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
}

export type Reply =
  | { status: number; json?: unknown; text?: string; headers?: Record<string, string> }
  /** Close the connection without answering. */
  | "drop"
  /** Never answer. */
  | "hang";

/**
 * A real HTTP server on 127.0.0.1 that answers queued replies per `METHOD /path` in order and records every
 * request. A request with nothing queued gets 418, which the clients never retry.
 */
export class FakeForge {
  readonly requests: Recorded[] = [];
  private readonly queues = new Map<string, Reply[]>();

  private constructor(
    private readonly server: Server,
    readonly origin: string,
    private readonly prefix: string,
  ) {}

  static async start(prefix = ""): Promise<FakeForge> {
    let forge: FakeForge | undefined;
    const server = createServer((req, res) => {
      void forge?.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    forge = new FakeForge(server, `http://127.0.0.1:${port}`, prefix);
    return forge;
  }

  get apiUrl(): string {
    return this.origin + this.prefix;
  }

  on(method: string, path: string, ...replies: Reply[]): this {
    const key = `${method} ${path}`;
    this.queues.set(key, [...(this.queues.get(key) ?? []), ...replies]);
    return this;
  }

  /** Replies queued but never asked for. */
  pending(): string[] {
    return [...this.queues].filter(([, replies]) => replies.length > 0).map(([key]) => key);
  }

  reset(): void {
    this.requests.length = 0;
    this.queues.clear();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", this.origin);
    const path = url.pathname.startsWith(this.prefix) ? url.pathname.slice(this.prefix.length) : url.pathname;
    this.requests.push({
      method: req.method ?? "",
      path,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: raw === "" ? undefined : JSON.parse(raw),
    });

    const key = `${req.method} ${path}`;
    const reply = this.queues.get(key)?.shift();
    if (reply === undefined) {
      res.writeHead(418, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: `fake forge: nothing queued for ${key}` }));
      return;
    }
    if (reply === "drop") {
      req.socket.destroy();
      return;
    }
    if (reply === "hang") return;
    const headers: Record<string, string> = { ...reply.headers };
    let body = "";
    if (reply.json !== undefined) {
      headers["content-type"] ??= "application/json; charset=utf-8";
      body = JSON.stringify(reply.json, null, 2);
    } else if (reply.text !== undefined) {
      headers["content-type"] ??= "text/plain; charset=utf-8";
      body = reply.text;
    }
    res.writeHead(reply.status, headers);
    res.end(body);
  }
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, json: body, headers };
}

export function empty(status: number, headers?: Record<string, string>): Reply {
  return { status, headers };
}

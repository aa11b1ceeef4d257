import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, type Socket } from "node:net";

/** Only TLS: the session talks to registries over https, and the proxy never sees what it says. */
const ALLOWED_PORT = 443;

/**
 * `host` is one the project allows: an exact name, or under a `*.` wildcard (`*.npmjs.org` allows
 * `registry.npmjs.org`, not `npmjs.org`). Names are compared lowercased, without a trailing dot.
 */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith("*.") ? name.endsWith(pattern.slice(1)) : name === pattern;
  });
}

/**
 * The sandbox's only way out besides the model: an HTTP CONNECT proxy (the sandbox sees it as
 * `HTTPS_PROXY`) that opens tunnels to port 443 of the project's allowed domains and refuses the rest.
 */
export class EgressProxy {
  readonly #server: Server;
  readonly #tunnels = new Set<Socket>();
  readonly refused: string[] = [];

  private constructor(allowed: readonly string[]) {
    this.#server = createServer((_req, res) => {
      res.writeHead(405, { "content-type": "text/plain" });
      res.end("only CONNECT to allowed hosts\n");
    });
    this.#server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
      const target = parseAuthority(req.url ?? "");
      if (target === null || target.port !== ALLOWED_PORT || !hostAllowed(target.host, allowed)) {
        this.refused.push(req.url ?? "");
        client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
        return;
      }
      const upstream = connect(target.port, target.host, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      for (const socket of [client, upstream]) {
        this.#tunnels.add(socket);
        socket.on("close", () => this.#tunnels.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
    });
  }

  static async start(allowed: readonly string[], socket: string): Promise<EgressProxy> {
    const proxy = new EgressProxy(allowed);
    await new Promise<void>((ready, fail) => {
      proxy.#server.once("error", fail);
      proxy.#server.listen(socket, ready);
    });
    return proxy;
  }

  close(): Promise<void> {
    for (const socket of this.#tunnels) socket.destroy();
    return new Promise((done) => {
      this.#server.close(() => done());
      this.#server.closeAllConnections();
    });
  }
}

function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(authority);
  if (!match?.[1] || !match[2]) return null;
  return { host: match[1], port: Number(match[2]) };
}

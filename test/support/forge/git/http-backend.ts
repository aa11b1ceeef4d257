import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { gitEnv } from "./exec.ts";

export interface CgiRequest {
  /** Directory holding `<owner>/<name>.git`. */
  projectRoot: string;
  /** `/<owner>/<name>.git/info/refs`, `/…/git-upload-pack`, `/…/git-receive-pack`. */
  pathInfo: string;
  query: string;
  /** The authenticated user; a set REMOTE_USER is what lets http-backend accept pushes. */
  user: string;
}

/**
 * Serves one smart-HTTP request with `git http-backend` (CGI): the request body is streamed to its stdin, the
 * CGI headers of its output become the response's status and headers, the rest is streamed as the body.
 * `beforeEnd` runs after the backend exited and before the response ends, so a pusher sees the forge's state
 * already updated when `git push` returns.
 */
export function serveHttpBackend(
  req: IncomingMessage,
  res: ServerResponse,
  cgi: CgiRequest,
  beforeEnd: () => Promise<void>,
): Promise<void> {
  const header = (name: string) => req.headers[name]?.toString() ?? "";
  const env = gitEnv({
    GIT_PROJECT_ROOT: cgi.projectRoot,
    GIT_HTTP_EXPORT_ALL: "1",
    PATH_INFO: cgi.pathInfo,
    QUERY_STRING: cgi.query,
    REQUEST_METHOD: req.method ?? "GET",
    CONTENT_TYPE: header("content-type"),
    REMOTE_USER: cgi.user,
    REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
    // git compresses large requests; protocol v2 is negotiated through this header.
    HTTP_CONTENT_ENCODING: header("content-encoding"),
    GIT_PROTOCOL: header("git-protocol"),
    ...(req.headers["content-length"] ? { CONTENT_LENGTH: header("content-length") } : {}),
  });
  return new Promise((resolve, reject) => {
    const backend = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
    req.pipe(backend.stdin);
    // The backend may stop reading early (a refused request); the rest of the body is of no interest.
    backend.stdin.on("error", () => {});
    let stderr = "";
    backend.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });

    let head = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      backend.stdout.off("data", onHead);
      let status = 200;
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
      backend.stdout.pipe(res, { end: false });
    };
    backend.stdout.on("data", onHead);

    backend.on("error", reject);
    backend.on("close", (code) => {
      const finish = async () => {
        if (!res.headersSent) {
          res.writeHead(500, { "Content-Type": "text/plain" });
          res.write(`git http-backend exited ${code}: ${stderr.trim()}\n`);
        }
        await beforeEnd();
        res.end();
      };
      finish().then(resolve, reject);
    });
  });
}

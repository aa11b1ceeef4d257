import { spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { git } from "../../../runner/git/exec.ts";

export const tempDir = (prefix: string): Promise<string> => mkdtemp(join(tmpdir(), `conveyor-${prefix}-`));

const HUMAN = {
  GIT_AUTHOR_NAME: "Upstream Dev",
  GIT_AUTHOR_EMAIL: "dev@example.test",
  GIT_COMMITTER_NAME: "Upstream Dev",
  GIT_COMMITTER_EMAIL: "dev@example.test",
};

/** A bare upstream repository plus a clone of it through which tests commit as a human would. */
export class Upstream {
  readonly path: string;
  readonly #clone: string;

  private constructor(path: string, clone: string) {
    this.path = path;
    this.#clone = clone;
  }

  /** `<root>/<name>.git` with `main` holding a few commits. */
  static async create(root: string, name = "upstream"): Promise<Upstream> {
    const path = join(root, `${name}.git`);
    const clone = join(root, `${name}-clone`);
    await git(["init", "--quiet", "--bare", "--initial-branch=main", path]);
    await git(["init", "--quiet", "--initial-branch=main", clone]);
    const upstream = new Upstream(path, clone);
    await upstream.commit({ "README.md": "# demo\n" }, "initial");
    await upstream.commit({ "src/a.txt": "a\n" }, "add a");
    await upstream.commit({ "src/b.txt": "b\n" }, "add b");
    return upstream;
  }

  /** The same repositories copied under `root` (see `upstreamTemplate`). */
  async copyTo(root: string, name = "upstream"): Promise<Upstream> {
    const path = join(root, `${name}.git`);
    const clone = join(root, `${name}-clone`);
    await Promise.all([
      cp(this.path, path, { recursive: true }),
      cp(this.#clone, clone, { recursive: true }),
    ]);
    return new Upstream(path, clone);
  }

  /** Commits the files on `main` and pushes; returns the new sha. */
  async commit(files: Record<string, string>, message: string): Promise<string> {
    for (const [name, content] of Object.entries(files)) {
      const file = join(this.#clone, name);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
    }
    await git(["-C", this.#clone, "add", "--all"]);
    await git(["-C", this.#clone, "commit", "--quiet", "-m", message], { env: HUMAN });
    await git(["-C", this.#clone, "push", "--quiet", this.path, "HEAD:refs/heads/main"]);
    return (await git(["-C", this.#clone, "rev-parse", "HEAD"])).trim();
  }

  async sha(branch: string): Promise<string | undefined> {
    const out = await git([
      "-C",
      this.path,
      "for-each-ref",
      "--format=%(objectname)",
      `refs/heads/${branch}`,
    ]);
    return out.trim() || undefined;
  }
}

export type GitHttpServer = {
  /** The smart-HTTP URL of `<root>/<name>`. */
  url(name: string): string;
  /** Every request as it arrived, credentials included, so tests can look for leaks. */
  requests: { url: string; authorization: string | undefined }[];
  /** A forge that stalls mid-push: it takes the pack and never answers. */
  stallPushes: boolean;
  close(): Promise<void>;
};

/** `git http-backend` behind Basic auth: every request, reads included, needs `username:password`. */
export async function startGitHttpServer(
  root: string,
  username: string,
  password: string,
): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  const requests: GitHttpServer["requests"] = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? "", authorization: req.headers.authorization });
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' }).end();
      return;
    }
    if (handle.stallPushes && req.method === "POST" && req.url?.endsWith("/git-receive-pack")) {
      req.resume();
      return;
    }
    serveCgi(root, username, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const handle: GitHttpServer = {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    requests,
    stallPushes: false,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return handle;
}

function serveCgi(root: string, user: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://localhost");
  const header = (name: string) => req.headers[name]?.toString() ?? "";
  const backend = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      // A set REMOTE_USER is what enables receive-pack (push) in http-backend.
      REMOTE_USER: user,
      REMOTE_ADDR: "127.0.0.1",
      REQUEST_METHOD: req.method,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: header("content-type"),
      HTTP_CONTENT_ENCODING: header("content-encoding"),
      GIT_PROTOCOL: header("git-protocol"),
      ...(req.headers["content-length"] ? { CONTENT_LENGTH: header("content-length") } : {}),
    },
  });
  req.pipe(backend.stdin);
  let head = Buffer.alloc(0);
  let headersSent = false;
  backend.stdout.on("data", (chunk: Buffer) => {
    if (headersSent) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    let status = 200;
    for (const line of head.subarray(0, end).toString().split("\r\n")) {
      const colon = line.indexOf(":");
      const [name, value] = [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
      if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
    headersSent = true;
  });
  backend.stdout.on("end", () => res.end());
  backend.on("error", () => res.destroy());
}

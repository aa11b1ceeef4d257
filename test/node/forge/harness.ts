import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createForgeClient, type ForgeClient, type Plain } from "../../../src/forge/client/index.ts";
import { git, identityEnv } from "../../support/forge/git/exec.ts";
import { type LocalForge, type LocalForgeOptions, startLocalForge } from "../../support/forge/index.ts";

export const tempDir = (prefix: string): Promise<string> =>
  mkdtemp(join(tmpdir(), `conveyor-forge-${prefix}-`));

/**
 * A local forge in a fresh data directory, and a scratch directory for the test's clones; `cleanup` closes
 * the forge and removes both.
 */
export async function startForge(
  options: Partial<LocalForgeOptions> = {},
): Promise<{ forge: LocalForge; workDir: string; cleanup: () => Promise<void> }> {
  const dataDir = options.dataDir ?? (await tempDir("data"));
  const workDir = await tempDir("work");
  const forge = await startLocalForge({ ...options, dataDir });
  return {
    forge,
    workDir,
    cleanup: async () => {
      await forge.close();
      await rm(dataDir, { recursive: true, force: true });
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/** The production client, as Conveyor's Worker creates it for a Forgejo project. */
/** `kind`: whose API paths the client takes (the local forge serves Forgejo's and GitHub's). */
export function clientFor(
  forge: LocalForge,
  token: string,
  repo: string,
  kind: "forgejo" | "github" = "forgejo",
): ForgeClient<Plain> {
  return createForgeClient({ forge: kind, apiUrl: forge.apiUrl, repo, token, maxAttempts: 1 });
}

const HUMAN = identityEnv({ name: "Dev Eloper", email: "dev@example.test" });

/** A clone made with plain `git` over smart HTTP, through which tests commit and push as a developer would. */
export class Checkout {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async clone(url: string, dir: string): Promise<Checkout> {
    await git(["clone", "--quiet", url, dir]);
    return new Checkout(dir);
  }

  run(...args: string[]): Promise<string> {
    return git(args, { cwd: this.dir, env: HUMAN }).then((result) => result.stdout.trim());
  }

  /** Commits `files` on `branch` (created from the current HEAD when new) and pushes it; returns the sha. */
  async commitAndPush(
    branch: string,
    files: Record<string, string>,
    message = `change ${branch}`,
  ): Promise<string> {
    await this.run("checkout", "--quiet", "-B", branch);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(this.dir, path)), { recursive: true });
      await writeFile(join(this.dir, path), content);
    }
    await this.run("add", "--all");
    await this.run("commit", "--quiet", "-m", message);
    await this.run("push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
    return this.run("rev-parse", "HEAD");
  }

  /** Back to `branch` as the forge has it. */
  async reset(branch: string): Promise<void> {
    await this.run("fetch", "--quiet", "origin");
    await this.run("checkout", "--quiet", "-B", branch, `origin/${branch}`);
  }
}

export interface Received {
  headers: Headers;
  /** The raw bytes, as a webhook endpoint must verify them. */
  body: Uint8Array;
}

/** A webhook endpoint recording what arrives; `reply` decides each answer ("hang": never answer). */
export async function startReceiver(
  reply: (received: Received) => { status: number; body: string } | "hang" = () => ({
    status: 200,
    body: "ok",
  }),
): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === "string") headers.set(name, value);
    const delivery = { headers, body: new Uint8Array(Buffer.concat(chunks)) };
    received.push(delivery);
    const answer = reply(delivery);
    if (answer === "hang") return;
    res.writeHead(answer.status, { "Content-Type": "text/plain" }).end(answer.body);
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

/** A raw API call with a token, for what the production client does not do. */
export async function api(
  forge: LocalForge,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  const headers: Record<string, string> = token ? { Authorization: `token ${token}` } : {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`${forge.apiUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A raw GET whose JSON answer the test describes with `T`. */
export async function apiGet<T>(forge: LocalForge, token: string, path: string): Promise<T> {
  return (await (await api(forge, token, "GET", path)).json()) as T;
}

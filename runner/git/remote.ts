/**
 * The private repository's traffic with the remote: creating it, fetching into it, pushing an issue's branch
 * from it, and the one kind of git command that carries the credential.
 */
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { GitError } from "./exec.ts";
import { pushArgs } from "./push-rules.ts";
import { run } from "./repository.ts";

export type GitCredential = { username: string; token: string };

/** What a command that talks to the remote needs besides its arguments. */
export type RemoteAccess = { credential: GitCredential | undefined; timeoutMs: number };

/**
 * The remote moved on without us. The runner is the only writer of conveyor/<issue>, so this means another
 * runner (or a human) wrote it: the work here is stale and must not overwrite theirs.
 */
export class PushRejectedError extends GitError {
  constructor(cause: GitError) {
    super(cause.args, cause.exitCode, cause.stderr);
    this.name = "PushRejectedError";
  }
}

/** A push the runner may not make at all (see push-rules.ts): another ref than the held issue's, a bad lease. */
export class PushRefusedError extends Error {
  constructor(reason: string) {
    super(`push refused: ${reason}`);
    this.name = "PushRefusedError";
  }
}

// `$1` is the helper's action; only `get` answers, `store` and `erase` are ignored.
const CREDENTIAL_HELPER =
  '!f() { if [ "$1" = get ]; then printf "username=%s\\npassword=%s\\n" ' +
  '"$CONVEYOR_GIT_USERNAME" "$CONVEYOR_GIT_TOKEN"; fi; }; f';
const REMOTE_HEADS = "+refs/heads/*:refs/remotes/origin/*";

export function checkRemoteUrl(remoteUrl: string, credential: GitCredential | undefined): void {
  if (!URL.canParse(remoteUrl)) {
    if (credential !== undefined) throw new Error("a credential needs an http(s) remote URL");
    return;
  }
  const url = new URL(remoteUrl);
  if (url.password !== "") throw new Error("the remote URL must not carry a password; use the credential");
  if (credential !== undefined && url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error("a credential needs an http(s) remote URL");
  }
}

export async function createMirror(access: RemoteAccess, mirror: string, remoteUrl: string): Promise<void> {
  // Built aside and renamed into place: a mirror that exists has completed its first fetch.
  await mkdir(dirname(mirror), { recursive: true });
  const partial = await mkdtemp(`${mirror}.partial-`);
  try {
    await run(partial, ["init", "--quiet", "--bare"]);
    await fetchMirror(access, partial, remoteUrl);
    await rename(partial, mirror);
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
}

export function fetchMirror(access: RemoteAccess, gitDir: string, remoteUrl: string): Promise<string> {
  return remoteGit(access, gitDir, remoteUrl, [
    "fetch",
    "--quiet",
    "--prune",
    "--no-tags",
    remoteUrl,
    REMOTE_HEADS,
  ]);
}

/** Pushes the private repository's `branch`, forced only under `lease`; returns the sha (see `Workspace.push`). */
export async function pushBranch(
  access: RemoteAccess,
  mirror: string,
  remoteUrl: string,
  { branch, lease }: { branch: string; lease: string | null },
): Promise<string> {
  const sha = (await run(mirror, ["rev-parse", "--verify", `refs/heads/${branch}^{commit}`])).trim();
  const attempt = (withLease: string | null) =>
    remoteGit(access, mirror, remoteUrl, ["push", "--quiet", remoteUrl, ...pushArgs(sha, branch, withLease)]);
  try {
    await attempt(null).catch((error: unknown) => {
      if (lease !== null && isRejection(error)) return attempt(lease);
      throw error;
    });
  } catch (error) {
    if (isRejection(error)) throw new PushRejectedError(error);
    throw error;
  }
  return sha;
}

/**
 * A git command that talks to the remote: the only kind that ever sees the credential, and only over https
 * (http for a loopback remote, as in tests; a local path only for a remote given as one).
 */
export function remoteGit(
  { credential, timeoutMs }: RemoteAccess,
  gitDir: string,
  remoteUrl: string,
  args: string[],
): Promise<string> {
  // An empty helper clears the list: the private repository has none, and none is ever taken from elsewhere.
  const config = ["-c", "credential.helper="];
  const env = { GIT_ALLOW_PROTOCOL: allowedProtocols(remoteUrl) };
  if (credential === undefined) return run(gitDir, [...config, ...args], env, timeoutMs);
  const { protocol, host } = new URL(remoteUrl);
  config.push("-c", `credential.${protocol}//${host}.helper=${CREDENTIAL_HELPER}`);
  const { username, token } = credential;
  return run(
    gitDir,
    [...config, ...args],
    { ...env, CONVEYOR_GIT_USERNAME: username, CONVEYOR_GIT_TOKEN: token },
    timeoutMs,
  );
}

/** The remote refused the update (not a fast-forward, or a stale lease), as opposed to failing. */
const isRejection = (error: unknown): error is GitError =>
  error instanceof GitError && error.stderr.includes("[rejected]");

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** `GIT_ALLOW_PROTOCOL` for a remote: https; http only on loopback; file only for a remote that is a path. */
function allowedProtocols(remoteUrl: string): string {
  if (!URL.canParse(remoteUrl)) return "file";
  const url = new URL(remoteUrl);
  if (url.protocol === "file:") return "file";
  return url.protocol === "http:" && LOOPBACK.has(url.hostname) ? "https:http" : "https";
}

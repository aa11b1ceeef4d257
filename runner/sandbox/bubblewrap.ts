import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { lstatSync, readlinkSync } from "node:fs";
import type { Writable } from "node:stream";
import { seccompBytes } from "./seccomp.ts";

/** What one sandbox sees of the host besides the system: every path at its own place. */
export type Mounts = {
  /** Read-write: the worktree, the agent's home, its phase directory, the proxies' sockets. */
  writable: readonly string[];
  /** Read-only: the private repository's objects, the Claude Code binary, Node and the init script. */
  readOnly: readonly string[];
  /** Files to hide (the runner's config and secret files where the system view would show them). */
  masked: readonly string[];
  cwd: string;
};

/** A top-level entry of the host's system: bound read-only, or a symlink (`/bin -> usr/bin`) recreated. */
export type SystemEntry = { path: string; symlink?: string };

/** The system the sandbox sees read-only. Home directories, /var, /srv, /mnt, /run and /tmp are not in it. */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

export function hostSystem(): SystemEntry[] {
  const entries: SystemEntry[] = [];
  for (const path of SYSTEM_PATHS) {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) entries.push({ path, symlink: readlinkSync(path) });
      else if (stat.isDirectory()) entries.push({ path });
    } catch {
      // Not on this host.
    }
  }
  return entries;
}

/**
 * The uid a sandbox runs as when the runner is root: root inside would be root of the sandbox's namespace,
 * and a non-zero uid with every capability dropped cannot remount a read-only bind or regain one by exec.
 */
export const SANDBOX_UID = 1000;
/** Where bubblewrap reads the seccomp program (seccomp.ts): the first descriptor after stdio. */
export const SECCOMP_FD = 3;

/**
 * bubblewrap's arguments for a session: new user, PID, network (loopback only), IPC, UTS and cgroup
 * namespaces; no capability, a non-zero uid, and the seccomp filter read from `SECCOMP_FD`; the system
 * read-only; a private /tmp, /proc and /dev; only the given paths of the host; its own session (no terminal
 * to inject into); and killed with the runner. Parents are bound before children.
 */
export function bubblewrapArgs(
  system: readonly SystemEntry[],
  mounts: Mounts,
  uid: number = process.getuid?.() ?? 0,
): string[] {
  const args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  if (uid === 0) args.push("--uid", String(SANDBOX_UID), "--gid", String(SANDBOX_UID));
  args.push("--seccomp", String(SECCOMP_FD));
  for (const entry of system) {
    if (entry.symlink !== undefined) args.push("--symlink", entry.symlink, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  const binds = [
    ...mounts.readOnly.map((path) => ({ path, flag: "--ro-bind" })),
    ...mounts.writable.map((path) => ({ path, flag: "--bind" })),
  ].sort((a, b) => depth(a.path) - depth(b.path));
  for (const { path, flag } of binds) args.push(flag, path, path);
  for (const path of mounts.masked) args.push("--ro-bind-try", "/dev/null", path);
  args.push("--chdir", mounts.cwd);
  return args;
}

/**
 * Starts bubblewrap with `args` (from `bubblewrapArgs`, then `--` and the command), handing it the seccomp
 * program on `SECCOMP_FD`. `stdio` is the child's descriptors 0–2; `extra` follows the program's (4, 5, …).
 */
export function spawnBubblewrap(
  args: readonly string[],
  options: Omit<SpawnOptions, "stdio"> & {
    stdio?: readonly ("pipe" | "ignore")[];
    extra?: readonly "pipe"[];
  },
): ChildProcess {
  const { stdio = ["pipe", "pipe", "pipe"], extra = [], ...rest } = options;
  const child = spawn(BWRAP, args, { ...rest, stdio: [...stdio, "pipe", ...extra] });
  const program = child.stdio[SECCOMP_FD] as Writable | null;
  // A bubblewrap that failed to start reads nothing; its exit says why.
  program?.on("error", () => {});
  program?.end(SECCOMP_PROGRAM);
  return child;
}

const SECCOMP_PROGRAM = seccompBytes();

function depth(path: string): number {
  return path.split("/").length;
}

export const BWRAP = "bwrap";

/**
 * Whether a sandbox can start here: runs `true` in one with every namespace. Null when it can; else why not,
 * in one line (no bubblewrap, or namespaces refused by the kernel or a container).
 */
export function probeSandbox(): Promise<string | null> {
  const args = [
    ...bubblewrapArgs(hostSystem(), { writable: [], readOnly: [], masked: [], cwd: "/" }),
    "true",
  ];
  return new Promise((done) => {
    const child = spawnBubblewrap(args, { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") done("bubblewrap (bwrap) is not installed: apt-get install bubblewrap");
      else done(`bubblewrap cannot start a sandbox: ${error.message}`);
    });
    child.on("close", (code, signal) => {
      if (code === 0) return done(null);
      const reason = stderr.trim().split("\n")[0] || `exit ${code ?? signal}`;
      done(`bubblewrap cannot start a sandbox: ${reason}`);
    });
  });
}

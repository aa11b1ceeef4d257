import { execFile } from "node:child_process";
import { lstatSync, readlinkSync } from "node:fs";

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
 * bubblewrap's arguments for a session: new user, PID, network (loopback only), IPC, UTS and cgroup
 * namespaces; the system read-only; a private /tmp, /proc and /dev; only the given paths of the host; its
 * own session (no terminal to inject into); and killed with the runner. Parents are bound before children.
 */
export function bubblewrapArgs(system: readonly SystemEntry[], mounts: Mounts): string[] {
  const args = ["--unshare-all", "--die-with-parent", "--new-session"];
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
    execFile(BWRAP, args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (!error) return done(null);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return done("bubblewrap (bwrap) is not installed: apt-get install bubblewrap");
      done(`bubblewrap cannot start a sandbox: ${stderr.trim().split("\n")[0] || error.message}`);
    });
  });
}

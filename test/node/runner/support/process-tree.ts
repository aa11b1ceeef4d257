import { readdirSync, readFileSync } from "node:fs";

export type ProcessInfo = { pid: number; ppid: number; pgid: number; command: string };

/** Every process, from /proc. */
function processes(): ProcessInfo[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => info(Number(name)))
    .filter((p): p is ProcessInfo => p !== null);
}

/** The live processes of process group `pgid` (exited ones not yet reaped left out). */
export function groupMembers(pgid: number): ProcessInfo[] {
  return processes().filter((p) => p.pgid === pgid && alive(p.pid));
}

/** Every live process under `pid` (children, grandchildren, ...), from /proc. */
export function descendants(pid: number): ProcessInfo[] {
  const all = processes();
  const found: ProcessInfo[] = [];
  const parents = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

export function alive(pid: number): boolean {
  const stat = read(`/proc/${pid}/stat`);
  // A zombie has exited; only its parent has yet to reap it.
  return stat !== null && afterName(stat)[0] !== "Z";
}

function info(pid: number): ProcessInfo | null {
  const stat = read(`/proc/${pid}/stat`);
  const cmdline = read(`/proc/${pid}/cmdline`);
  if (stat === null || cmdline === null) return null;
  const [, ppid, pgid] = afterName(stat);
  return { pid, ppid: Number(ppid), pgid: Number(pgid), command: cmdline.replaceAll("\0", " ").trim() };
}

/** The fields after the command name (state, ppid, ...): the name in parentheses may hold spaces and ")". */
function afterName(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function read(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

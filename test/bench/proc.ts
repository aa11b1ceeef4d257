/** What /proc says of the bench's processes: a process group's CPU time, a process tree's memory. */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

type Stat = { pid: number; name: string; ppid: number; pgrp: number; cpuTicks: number };

/** Every process's stat line, parsed; a process that exits meanwhile is left out. */
function processes(): Stat[] {
  return readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      return [];
    }
    // The name is in parentheses and may hold spaces: fields are counted after its closing one.
    const close = stat.lastIndexOf(")");
    // From the state (3rd field) on: ppid is the 4th, pgrp the 5th, utime the 14th, stime the 15th.
    const fields = stat.slice(close + 2).split(" ");
    return [
      {
        pid: Number(entry),
        name: stat.slice(stat.indexOf("(") + 1, close),
        ppid: Number(fields[1]),
        pgrp: Number(fields[2]),
        cpuTicks: Number(fields[11]) + Number(fields[12]),
      },
    ];
  });
}

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** Milliseconds of CPU (user + system) the group's workerd processes, and all of its processes, have used. */
export function processGroupCpuMs(group: number | undefined): { workerd: number; all: number } {
  const total = { workerd: 0, all: 0 };
  if (group === undefined) return total;
  for (const p of processes()) {
    if (p.pgrp !== group) continue;
    const ms = (p.cpuTicks * 1000) / TICKS_PER_SECOND;
    total.all += ms;
    if (p.name.startsWith("workerd")) total.workerd += ms;
  }
  return total;
}

/** Resident memory of `pid` and all its descendants, in bytes, by name (`node`, `bwrap`, `claude`, ...). */
export function treeRss(pid: number): { bytes: number; byName: Record<string, number> } {
  const all = processes();
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (tree.has(p.pid) || !tree.has(p.ppid)) continue;
      tree.add(p.pid);
      grew = true;
    }
  }
  const byName: Record<string, number> = {};
  let bytes = 0;
  for (const p of all) {
    if (!tree.has(p.pid)) continue;
    const kb = rssKb(p.pid);
    bytes += kb * 1024;
    byName[p.name] = (byName[p.name] ?? 0) + kb * 1024;
  }
  return { bytes, byName };
}

function rssKb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Resident memory of the group's processes whose name starts with `name` (the local Worker's `workerd`), bytes. */
export function groupRss(group: number | undefined, name: string): number {
  if (group === undefined) return 0;
  return processes()
    .filter((p) => p.pgrp === group && p.name.startsWith(name))
    .reduce((bytes, p) => bytes + rssKb(p.pid) * 1024, 0);
}

/**
 * Open file descriptors of the group's workerd processes against their limit, most first: a workerd at its
 * limit drops calls with "Network connection lost" (wrangler dev's proxy, in front of the Worker's workerd, did
 * at a thousand sessions: two sockets per call in flight, and those whose peer hung up kept).
 */
export function groupOpenFiles(group: number | undefined): { pid: number; open: number; limit: number }[] {
  if (group === undefined) return [];
  return processes()
    .filter((p) => p.pgrp === group && p.name.startsWith("workerd"))
    .map((p) => {
      try {
        const limits = readFileSync(`/proc/${p.pid}/limits`, "utf8");
        const limit = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? Number.NaN);
        return { pid: p.pid, open: readdirSync(`/proc/${p.pid}/fd`).length, limit };
      } catch {
        return { pid: p.pid, open: 0, limit: Number.NaN };
      }
    })
    .sort((a, b) => b.open - a.open);
}

/** How many files whose path matches `path` the group's `name` processes hold open (each counted once). */
export function groupOpenPaths(group: number | undefined, name: string, path: RegExp): number {
  if (group === undefined) return 0;
  const open = new Set<string>();
  for (const p of processes().filter((p) => p.pgrp === group && p.name.startsWith(name))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${p.pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${p.pid}/fd/${fd}`);
        if (path.test(target)) open.add(target);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return open.size;
}

/** CPU time of a process group (the local Worker's wrangler and its workerd), read from /proc. */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** Milliseconds of CPU (user + system) the group's workerd processes, and all of its processes, have used. */
export function processGroupCpuMs(group: number | undefined): { workerd: number; all: number } {
  const total = { workerd: 0, all: 0 };
  if (group === undefined) return total;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // The name is in parentheses and may hold spaces: fields are counted after its closing one.
    const close = stat.lastIndexOf(")");
    const name = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    // Fields from the state (3rd): pgrp is the 5th, utime the 14th, stime the 15th.
    if (Number(fields[2]) !== group) continue;
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
    total.all += ms;
    if (name.startsWith("workerd")) total.workerd += ms;
  }
  return total;
}

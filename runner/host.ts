import { readFileSync } from "node:fs";
import { availableParallelism, freemem, loadavg, totalmem } from "node:os";
import type { HostReport } from "../src/runner-api/contract.ts";

/**
 * The build host's memory and load, for the supervisor (docs/supervisor.md). Cheap enough for every claim:
 * a few system calls and one small file. `MemAvailable` counts the page cache the kernel would give back,
 * which free memory alone does not; where /proc is missing (not Linux), free memory stands in for it.
 */
export function measureHost(meminfo = "/proc/meminfo"): HostReport {
  const total = totalmem();
  const available = memAvailable(meminfo) ?? freemem();
  return {
    memAvailableBytes: Math.min(available, total),
    memTotalBytes: total,
    load1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    cpus: availableParallelism(),
  };
}

/** `MemAvailable:  123456 kB` in bytes; undefined when the file or the line is missing. */
export function memAvailable(meminfo: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(meminfo, "utf8");
  } catch {
    return undefined;
  }
  const match = /^MemAvailable:\s+(\d+)\s*kB/m.exec(text);
  return match ? Number(match[1]) * 1024 : undefined;
}

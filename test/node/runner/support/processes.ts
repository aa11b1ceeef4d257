import { execFileSync } from "node:child_process";

/** Whether a process whose command line contains `pattern` is running (`pgrep -f`). */
export function running(pattern: string): boolean {
  try {
    execFileSync("pgrep", ["-f", pattern]);
    return true;
  } catch {
    return false;
  }
}

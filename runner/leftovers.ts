import { readdirSync, readFileSync } from "node:fs";
import { sleep } from "./sleep.ts";

/** Killed processes take a moment to exit and may have forked meanwhile: look again, for up to about 5 s. */
const PASSES = 100;
const PASS_INTERVAL_MS = 50;

/**
 * Kills the processes of sessions that a dead runner left behind in this work dir; resolves with their pids
 * once none is left. Claude Code outlives a runner killed by SIGKILL (or the OOM killer): it finishes the tool
 * call in progress and goes on with the session, editing and committing in the worktree and writing the phase
 * file, beside the attempt this runner is about to start there, and spending what nobody reports. Its tool
 * processes run in sessions of their own, out of reach of any process group. What marks every agent process
 * is the environment it inherits: a `CONVEYOR_PHASE_FILE` in this work dir's agents dir; the lock makes them a
 * dead runner's. Sandboxed sessions die with the runner (bubblewrap's --die-with-parent); this is for those
 * run with --unsafe-no-sandbox. Reads /proc: on hosts without it (macOS) it finds nothing.
 */
export async function killLeftoverSessions(agentsDir: string): Promise<number[]> {
  const killed = new Set<number>();
  for (let pass = 0; pass < PASSES; pass++) {
    const found = sessionProcesses(agentsDir);
    if (found.length === 0) break;
    for (const pid of found) {
      try {
        process.kill(pid, "SIGKILL");
        killed.add(pid);
      } catch {
        // Gone already.
      }
    }
    await sleep(PASS_INTERVAL_MS);
  }
  return [...killed];
}

/** The live processes of sessions of this work dir's agents dir, marked by the environment they inherit. */
export function sessionProcesses(agentsDir: string): number[] {
  const marker = `CONVEYOR_PHASE_FILE=${agentsDir}/`;
  return pids().filter((pid) => pid !== process.pid && environ(pid).some((v) => v.startsWith(marker)));
}

function pids(): number[] {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** The process's environment; empty once it has exited (a zombie), or if it is not this user's. */
function environ(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  } catch {
    return [];
  }
}

import { groupMembers, type ProcessInfo } from "../../runner/support/process-tree.ts";

/**
 * Resolves once process group `pgid` has a live member whose command line matches `command` (the workerd that
 * wrangler starts): /proc says nothing when a process starts, so it is looked at every 50 ms, for a minute.
 */
export async function runningGroup(pgid: number, command: RegExp): Promise<void> {
  const running = () => groupMembers(pgid).some((p) => command.test(p.command));
  for (const deadline = Date.now() + 60_000; !running(); ) {
    if (Date.now() > deadline) throw new Error(`group ${pgid} never ran ${command}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The members of group `pgid` still alive once they have had a moment to die: a process killed in the middle
 * of a disk write finishes it first. Looked at every 50 ms, for at most 10 s.
 */
export async function leftIn(pgid: number): Promise<ProcessInfo[]> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const left = groupMembers(pgid);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

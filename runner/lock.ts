import { readFileSync, rmSync, writeFileSync } from "node:fs";

/**
 * One runner process per work dir: two would fetch into the same mirrors and run sessions in the same
 * worktrees. The lock holds the pid; a lock whose process is gone (SIGKILL, reboot) is taken over.
 */
export function acquireLock(file: string): () => void {
  try {
    writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const holder = Number.parseInt(readFileSync(file, "utf8"), 10);
    if (Number.isSafeInteger(holder) && holder !== process.pid && isAlive(holder)) {
      throw new Error(`work dir in use by another runner (pid ${holder}, ${file})`);
    }
    writeFileSync(file, `${process.pid}\n`);
  }
  return () => rmSync(file, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

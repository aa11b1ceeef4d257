import { lstat, readdir, statfs } from "node:fs/promises";
import { join } from "node:path";
import type { DiskReport } from "../src/runner-api/contract.ts";

/** Measured at most this often: a walk of every worktree is not free, and disk use moves slowly. */
export const DISK_MEASURE_INTERVAL_MS = 60_000;

/**
 * Disk used under the work dir (allocated blocks, as `du` counts them; symbolic links are not followed), the
 * number of issue worktrees in it (`worktrees/<repo>/<issue>`, see runner/git/workspace.ts), and the free space
 * and size of its file system (what the supervisor warns about). Files that vanish while it walks (a reap, a
 * session at work) are skipped.
 */
export async function measureWorkDir(workDir: string): Promise<DiskReport> {
  const report = { bytes: await usage(workDir), worktrees: await countWorktrees(join(workDir, "worktrees")) };
  return { ...report, ...(await fileSystem(workDir)) };
}

/** Free space an unprivileged user may use (one system call: cheap enough before every claim). */
export async function freeSpace(path: string): Promise<number | undefined> {
  return (await fileSystem(path)).freeBytes;
}

/** Free space an unprivileged user may use, and the size; nothing when the work dir does not exist yet. */
async function fileSystem(path: string): Promise<Pick<DiskReport, "freeBytes" | "totalBytes">> {
  const fs = await statfs(path).catch(() => null);
  if (!fs) return {};
  return { freeBytes: fs.bavail * fs.bsize, totalBytes: fs.blocks * fs.bsize };
}

async function usage(path: string): Promise<number> {
  const stat = await lstat(path).catch(() => null);
  if (!stat) return 0;
  const own = stat.blocks * 512;
  if (!stat.isDirectory()) return own;
  const entries = await readdir(path).catch(() => []);
  let total = own;
  for (const entry of entries) total += await usage(join(path, entry));
  return total;
}

async function countWorktrees(dir: string): Promise<number> {
  let count = 0;
  for (const repo of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!repo.isDirectory()) continue;
    const issues = await readdir(join(dir, repo.name), { withFileTypes: true }).catch(() => []);
    count += issues.filter((issue) => issue.isDirectory()).length;
  }
  return count;
}

/**
 * The latest measurement, for the runner's claims: refreshed in the background once it is older than the
 * interval, so a claim never waits for a walk. `clock` is injectable for tests.
 */
export class DiskMeter {
  readonly #workDir: string;
  readonly #intervalMs: number;
  readonly #clock: () => number;
  #latest: DiskReport | undefined;
  #measuredAt = Number.NEGATIVE_INFINITY;
  #running: Promise<void> | undefined;

  constructor(workDir: string, intervalMs = DISK_MEASURE_INTERVAL_MS, clock: () => number = Date.now) {
    this.#workDir = workDir;
    this.#intervalMs = intervalMs;
    this.#clock = clock;
  }

  /**
   * What a claim or heartbeat reports: the last measurement with the worktrees counted now (a listing of two
   * directory levels, cheap, where the byte count is a walk of everything), so a worktree made or reaped shows
   * at the next call, not a minute later. Undefined before the first measurement ends.
   */
  async current(): Promise<DiskReport | undefined> {
    const latest = this.latest();
    if (!latest) return undefined;
    return { ...latest, worktrees: await countWorktrees(join(this.#workDir, "worktrees")) };
  }

  /** The last measurement (undefined before the first ends); starts a new one when it is due. */
  latest(): DiskReport | undefined {
    if (!this.#running && this.#clock() - this.#measuredAt >= this.#intervalMs) void this.refresh();
    return this.#latest;
  }

  /** Measures now (or joins the measurement under way). Never rejects: a failed walk keeps the last report. */
  refresh(): Promise<void> {
    this.#running ??= measureWorkDir(this.#workDir)
      .then((report) => {
        this.#latest = report;
      })
      .catch(() => undefined)
      .finally(() => {
        this.#measuredAt = this.#clock();
        this.#running = undefined;
      });
    return this.#running;
  }
}

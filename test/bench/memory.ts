/**
 * The local Worker's memory with many live issues: `issues` issues opened on the local forge and triaged
 * (each one's IssueDO created, its state and outbox written, its job queued on the ProjectDO), against the
 * same Worker before. In the local runtime every object stays in the one workerd process until it is evicted;
 * on Cloudflare each object's memory is its own (128 MB an isolate), so this is the dev machine's ceiling and
 * what one live issue's object holds.
 */
import { readFileSync } from "node:fs";
import type { LocalWorker } from "../support/worker.ts";
import { benchProject } from "./forge-project.ts";
import { emit } from "./load.ts";
import { groupRss } from "./proc.ts";

const MIB = 2 ** 20;
const MIN_AVAILABLE = 3 * 2 ** 30;

function availableBytes(): number {
  const kb = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1];
  return Number(kb ?? Number.POSITIVE_INFINITY) * 1024;
}

export async function benchWorkerMemory(
  worker: LocalWorker,
  { issues = 10_000, width = 8 } = {},
): Promise<void> {
  const bench = await benchProject(worker.url, "bench-memory");
  try {
    const before = groupRss(worker.pid, "workerd");
    // In tenths, each sampled; the machine is shared, so the bench stops short of starving it.
    const samples: [number, number][] = [[0, before]];
    let live = 0;
    for (let tenth = 1; tenth <= 10; tenth++) {
      const upTo = Math.round((issues * tenth) / 10);
      await Promise.all(
        Array.from({ length: width }, async () => {
          for (let i = live++; i < upTo; i = live++) {
            const number = await bench.issue(`Live ${i}`);
            await bench.operator.triage("bench-memory", number);
          }
        }),
      );
      live = upTo;
      samples.push([upTo, groupRss(worker.pid, "workerd")]);
      if (availableBytes() < MIN_AVAILABLE) {
        console.error(
          `memory: stopped at ${upTo} live issues, the machine's available memory is under 3 GiB`,
        );
        break;
      }
    }
    const [reached, after] = samples.at(-1) as [number, number];
    // Per issue from the first tenth on: the first objects also pay for the code and the runtime's warm-up.
    const [firstCount, firstRss] = samples[1] ?? samples[0] ?? [0, before];
    console.error(
      `memory: workerd RSS (MiB) by live issues ${JSON.stringify(samples.map(([n, b]) => [n, Math.round(b / MIB)]))}`,
    );
    emit({ name: "worker_rss_before_issues", value: before / MIB, unit: "MiB" });
    emit({ name: `worker_rss_${reached}_live_issues`, value: after / MIB, unit: "MiB" });
    emit({
      name: "worker_rss_per_live_issue",
      value: (after - firstRss) / Math.max(1, reached - firstCount) / 1024,
      unit: "KiB",
    });
  } finally {
    await bench.close();
  }
}

// Alone, with a small size while developing: `node test/bench/memory.ts 200`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { startLocalWorker } = await import("../support/worker.ts");
  const worker = await startLocalWorker({ stateParent: "/dev/shm" });
  try {
    await benchWorkerMemory(worker, { issues: Number(process.argv[2] ?? 10_000) });
  } finally {
    await worker.stop();
  }
}

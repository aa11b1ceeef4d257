/**
 * The Worker's memory with many live issues, on a Worker of its own under Miniflare (one workerd, no dev proxy:
 * its RSS is the Worker's alone) that keeps every object it touched in memory, so that `issues` live issues
 * are in memory at once (`evict: true`: the runtime evicts idle objects after some seconds, as Cloudflare
 * does). `issues` issues are opened on the local forge and triaged by the operator API:
 * the triage event a `backlog` label's delivery ends in (src/projects/dispatch.ts `triage`), so each issue's
 * IssueDO is created with its state, history and outbox, and its job queued on the ProjectDO; the delivery's
 * own D1 rows (the mirror, the record) are D1's, not an issue object's, and are left out. Sampled each tenth:
 * workerd's RSS, the Worker isolate's V8 heap after a full collection (its inspector), and the objects still
 * in memory (the SQLite databases workerd holds open: one per live object, closed when it is evicted).
 * In the local runtime every object shares the one isolate and process; on Cloudflare an isolate has 128 MB
 * and holds some of a class's objects, and idle objects are evicted (docs/performance.md, "Memory").
 */
import { readFileSync } from "node:fs";
import { startMiniflareWorker } from "../support/miniflare-worker.ts";
import type { LocalWorker } from "../support/worker.ts";
import { benchProject } from "./forge-project.ts";
import { emit } from "./load.ts";
import { groupOpenPaths, groupRss } from "./proc.ts";
import { WorkerProfiler } from "./profile.ts";

const MIB = 2 ** 20;
const MIN_AVAILABLE = 3 * 2 ** 30;
/** A Durable Object's database as workerd persists it (`<state>/v3/do/<class>/<id>.sqlite`). */
const OBJECT_DATABASE = /\/v3\/do\/[^/]+\/[0-9a-f]+\.sqlite$/;

function availableBytes(): number {
  const kb = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1];
  return Number(kb ?? Number.POSITIVE_INFINITY) * 1024;
}

type Sample = { issues: number; rss: number; heap: number; objects: number; seconds: number };

export async function benchWorkerMemory({
  issues = 10_000,
  width = 8,
  evict = false,
  stateParent,
}: {
  issues?: number;
  width?: number;
  evict?: boolean;
  stateParent?: string | undefined;
} = {}): Promise<void> {
  const worker = await startMiniflareWorker({ stateParent, preventEviction: !evict });
  try {
    await measure(worker, issues, width);
  } finally {
    await worker.stop();
  }
}

async function measure(worker: LocalWorker, issues: number, width: number): Promise<void> {
  const began = performance.now();
  const sample = async (count: number): Promise<Sample> => ({
    issues: count,
    rss: groupRss(worker.pid, "workerd"),
    heap: (await WorkerProfiler.heap(worker.inspectorPort)).usedSize,
    objects: groupOpenPaths(worker.pid, "workerd", OBJECT_DATABASE),
    seconds: (performance.now() - began) / 1000,
  });
  const bench = await benchProject(worker.url, "bench-memory");
  try {
    const samples = [await sample(0)];
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
      samples.push(await sample(upTo));
      // The machine is shared: the bench stops short of starving it.
      if (availableBytes() < MIN_AVAILABLE) {
        console.error(
          `memory: stopped at ${upTo} live issues, the machine's available memory is under 3 GiB`,
        );
        break;
      }
    }
    const before = samples[0] as Sample;
    const last = samples.at(-1) as Sample;
    // Per issue from the first tenth on: the first objects also pay for the code and the runtime's warm-up.
    const first = samples[1] ?? before;
    const per = (key: "rss" | "heap") => (last[key] - first[key]) / Math.max(1, last.issues - first.issues);
    console.error(
      `memory: by live issues [issues, workerd RSS MiB, heap MiB, objects in memory, s] ${JSON.stringify(
        samples.map((s) => [s.issues, mib(s.rss), mib(s.heap), s.objects, Math.round(s.seconds)]),
      )}`,
    );
    const n = last.issues;
    emit({ name: "worker_rss_before_issues", value: before.rss / MIB, unit: "MiB" });
    emit({ name: `worker_rss_${n}_live_issues`, value: last.rss / MIB, unit: "MiB" });
    emit({ name: "worker_rss_per_live_issue", value: per("rss") / 1024, unit: "KiB" });
    emit({ name: "worker_heap_before_issues", value: before.heap / MIB, unit: "MiB" });
    // Locally one isolate holds the routes and every object; on Cloudflare, 128 MB is an isolate's ceiling.
    emit({ name: `worker_heap_${n}_live_issues`, value: last.heap / MIB, unit: "MiB", target: "< 128" });
    emit({ name: "worker_heap_per_live_issue", value: per("heap") / 1024, unit: "KiB" });
    // Objects whose databases are still open after the run: evicted ones are not counted.
    emit({ name: `worker_objects_in_memory_${n}_live_issues`, value: last.objects, unit: "objects" });
    emit({
      name: "worker_memory_issues_per_second",
      value: n / (last.seconds - before.seconds),
      unit: "1/s",
    });
  } finally {
    await bench.close();
  }
}

const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;

// Alone, with a small size while developing: `node test/bench/memory.ts issues=200 [evict=1]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const options = Object.fromEntries(process.argv.slice(2).map((arg) => arg.split("=")));
  await benchWorkerMemory({
    issues: Number(options.issues ?? 10_000),
    evict: options.evict === "1",
    stateParent: "/dev/shm",
  });
}

/**
 * The Worker's memory with many live issues, each phase on a Worker of its own under Miniflare (one workerd,
 * no dev proxy: its RSS is the Worker's alone). Issues are opened on the local forge and triaged by the
 * operator API: the triage event a `backlog` label's delivery ends in (src/projects/dispatch.ts `triage`), so
 * each issue's IssueDO is created with its state, history and outbox, and its job queued on the ProjectDO; the
 * delivery's own D1 rows (the mirror, the record) are D1's, not an issue object's, and are left out. Read as
 * they go: workerd's RSS, the Worker isolate's V8 heap after a full collection (its inspector), and the objects
 * in memory (the SQLite databases workerd holds open: one per object in memory, closed when it is evicted).
 *
 * 1. `issues` live issues as the runtime keeps them: idle objects evicted after some seconds, as Cloudflare
 *    evicts them. What the Worker's process holds with that many issues touched.
 * 2. `held` issues with every object kept in memory (Miniflare's `unsafePreventEviction`): what one object in
 *    memory costs, and how many the local runtime can hold at once (each holds file descriptors).
 *
 * Locally every object shares the one isolate and process; on Cloudflare an isolate has 128 MB and holds some
 * of a class's objects (docs/performance.md, "Memory").
 */
import { readFileSync } from "node:fs";
import { startMiniflareWorker } from "../support/miniflare-worker.ts";
import type { LocalWorker } from "../support/worker.ts";
import { benchProject } from "./forge-project.ts";
import { emit } from "./load.ts";
import { groupOpenFiles, groupOpenPaths, groupRss } from "./proc.ts";
import { WorkerProfiler } from "./profile.ts";

const MIB = 2 ** 20;
const MIN_AVAILABLE = 3 * 2 ** 30;
/** A Durable Object's database as workerd persists it (`<state>/v3/do/<class>/<id>.sqlite`). */
const OBJECT_DATABASE = /\/v3\/do\/[^/]+\/[0-9a-f]+\.sqlite$/;
/** The share of workerd's descriptor limit the held phase stops short of: past it, calls fail. */
const DESCRIPTOR_MARGIN = 0.9;

function availableBytes(): number {
  const kb = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1];
  return Number(kb ?? Number.POSITIVE_INFINITY) * 1024;
}

type Sample = {
  issues: number;
  rss: number;
  heap: number;
  objects: number;
  descriptors: number;
  limit: number;
  seconds: number;
  /** The most objects in memory at once so far, read each second: evictions come between the tenths. */
  peakObjects: number;
};

export async function benchWorkerMemory({
  issues = 10_000,
  held = 2_000,
  width = 8,
  stateParent,
}: {
  issues?: number;
  held?: number;
  width?: number;
  stateParent?: string | undefined;
} = {}): Promise<void> {
  const live = await onWorker(stateParent, false, (worker) => touch(worker, issues, width, false));
  const first = live[0] as Sample;
  const last = live.at(-1) as Sample;
  const n = last.issues;
  emit({ name: "worker_rss_before_issues", value: first.rss / MIB, unit: "MiB" });
  emit({ name: `worker_rss_${n}_live_issues`, value: last.rss / MIB, unit: "MiB" });
  // Locally one isolate holds the routes and every object; on Cloudflare, 128 MB is an isolate's ceiling.
  emit({ name: `worker_heap_${n}_live_issues`, value: last.heap / MIB, unit: "MiB", target: "< 128" });
  emit({
    name: `worker_objects_in_memory_peak_${n}_live_issues`,
    value: last.peakObjects,
    unit: "objects",
  });
  emit({
    name: "worker_memory_issues_per_second",
    value: n / (last.seconds - first.seconds),
    unit: "1/s",
  });

  const kept = await onWorker(stateParent, true, (worker) => touch(worker, held, width, true));
  // Per object from the first tenth on: the first objects also pay for the code and the runtime's warm-up.
  const from = kept[1] ?? (kept[0] as Sample);
  const to = kept.at(-1) as Sample;
  const per = (key: "rss" | "heap" | "descriptors") =>
    (to[key] - from[key]) / Math.max(1, to.objects - from.objects);
  emit({ name: "worker_rss_per_object_in_memory", value: per("rss") / 1024, unit: "KiB" });
  emit({ name: "worker_heap_per_object_in_memory", value: per("heap") / 1024, unit: "KiB" });
  emit({ name: "worker_descriptors_per_object_in_memory", value: per("descriptors"), unit: "fds" });
  // The local runtime's ceiling on objects in memory at once: workerd's descriptors (`ulimit -n`).
  emit({
    name: "worker_objects_in_memory_local_ceiling",
    value: (to.limit - (to.descriptors - per("descriptors") * to.objects)) / per("descriptors"),
    unit: "objects",
  });
}

async function onWorker<T>(
  stateParent: string | undefined,
  preventEviction: boolean,
  run: (worker: LocalWorker) => Promise<T>,
): Promise<T> {
  const worker = await startMiniflareWorker({ stateParent, preventEviction });
  try {
    return await run(worker);
  } finally {
    await worker.stop();
  }
}

/** Touches `issues` issues' objects in tenths, sampled after each; stops short of the machine's limits. */
async function touch(worker: LocalWorker, issues: number, width: number, held: boolean): Promise<Sample[]> {
  const phase = held ? "held" : "live";
  const began = performance.now();
  const objectsInMemory = () => groupOpenPaths(worker.pid, "workerd", OBJECT_DATABASE);
  let peakObjects = 0;
  const peaks = setInterval(() => {
    peakObjects = Math.max(peakObjects, objectsInMemory());
  }, 1_000);
  const sample = async (count: number): Promise<Sample> => {
    const [files] = groupOpenFiles(worker.pid);
    peakObjects = Math.max(peakObjects, objectsInMemory());
    return {
      peakObjects,
      issues: count,
      rss: groupRss(worker.pid, "workerd"),
      heap: (await WorkerProfiler.heap(worker.inspectorPort)).usedSize,
      objects: objectsInMemory(),
      descriptors: files?.open ?? 0,
      limit: files?.limit ?? Number.POSITIVE_INFINITY,
      seconds: (performance.now() - began) / 1000,
    };
  };
  const bench = await benchProject(worker.url, "bench-memory");
  try {
    const samples = [await sample(0)];
    let next = 0;
    for (let tenth = 1; tenth <= 10; tenth++) {
      const upTo = Math.round((issues * tenth) / 10);
      await Promise.all(
        Array.from({ length: width }, async () => {
          for (let i = next++; i < upTo; i = next++) {
            const number = await bench.issue(`Live ${i}`);
            await bench.operator.triage("bench-memory", number).catch((error: unknown) => {
              throw new Error(
                `triage of #${number}: ${String(error)}; ${JSON.stringify(groupOpenFiles(worker.pid))}`,
              );
            });
          }
        }),
      );
      next = upTo;
      const last = await sample(upTo);
      samples.push(last);
      // The machine is shared: the bench stops short of starving it, and of workerd's descriptors (held, the
      // next tenth's objects will hold theirs too).
      const perObject = (last.descriptors - (samples[0] as Sample).descriptors) / Math.max(1, last.objects);
      const descriptorsNext = last.descriptors + (held ? (perObject * issues) / 10 : 0);
      const stop =
        availableBytes() < MIN_AVAILABLE
          ? "the machine's available memory is under 3 GiB"
          : descriptorsNext > last.limit * DESCRIPTOR_MARGIN
            ? `workerd's descriptors would pass ${DESCRIPTOR_MARGIN * 100} % of its ${last.limit}`
            : null;
      if (stop && tenth < 10) {
        console.error(`memory (${phase}): stopped at ${upTo} issues: ${stop}`);
        break;
      }
    }
    console.error(
      `memory (${phase}): [issues, workerd RSS MiB, heap MiB, objects in memory, descriptors, s] ${JSON.stringify(
        samples.map((s) => [
          s.issues,
          mib(s.rss),
          mib(s.heap),
          s.objects,
          s.descriptors,
          Math.round(s.seconds),
        ]),
      )}`,
    );
    return samples;
  } finally {
    clearInterval(peaks);
    await bench.close();
  }
}

const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;

// Alone, with small sizes while developing: `node test/bench/memory.ts issues=500 held=200`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const options = Object.fromEntries(
    process.argv
      .slice(2)
      .map((arg) => arg.split("="))
      .map(([k, v]) => [k, Number(v)]),
  );
  await benchWorkerMemory({ ...options, stateParent: "/dev/shm" });
}

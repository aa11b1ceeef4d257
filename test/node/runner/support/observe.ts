import type { RunnerProcess } from "./runner-process.ts";

/** Polls `probe` until it returns something truthy, and returns that. */
export async function until<T>(probe: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${probe.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The runner's log so far, parsed. */
export function logLines(runner: RunnerProcess): Record<string, unknown>[] {
  return runner.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The most intervals open at once; one that ends as another starts does not overlap it. */
export function maxOverlap(intervals: readonly { start: number; end: number }[]): number {
  const edges = intervals.flatMap(({ start, end }) => [
    { at: start, delta: 1 },
    { at: end, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let max = 0;
  for (const { delta } of edges) {
    open += delta;
    max = Math.max(max, open);
  }
  return max;
}

/** A bounded closed-loop load generator: `concurrency` workers send `total` requests, timing each. */
export type LoadResult = { latenciesMs: number[]; seconds: number };

export async function load(
  total: number,
  concurrency: number,
  send: (i: number) => Promise<void>,
): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await send(i);
        latenciesMs.push(performance.now() - t);
      }
    }),
  );
  return { latenciesMs, seconds: (performance.now() - started) / 1000 };
}

/**
 * Runs two loads in alternating rounds with a pause before each, joining each side's results: a slow spell
 * of a shared machine weighs on both alike, and no round starts under the previous one's background work.
 */
export async function alternate(
  rounds: number,
  a: (round: number) => Promise<LoadResult>,
  b: (round: number) => Promise<LoadResult>,
): Promise<[LoadResult, LoadResult]> {
  const joined: [LoadResult, LoadResult] = [
    { latenciesMs: [], seconds: 0 },
    { latenciesMs: [], seconds: 0 },
  ];
  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
  for (let round = 0; round < rounds; round++) {
    for (const [side, run] of [a, b].entries()) {
      await settle();
      const result = await run(round);
      joined[side]?.latenciesMs.push(...result.latenciesMs);
      (joined[side] as LoadResult).seconds += result.seconds;
    }
  }
  return joined;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export type Figure = {
  name: string;
  value: number;
  unit: string;
  target?: string;
  baseline?: number;
  /** What the value is made of, by name (the escalations' causes). */
  parts?: Record<string, number>;
};

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));

export function emit(figure: Figure): void {
  const baseline = figure.baseline === undefined ? {} : { baseline: round(figure.baseline) };
  console.log(JSON.stringify({ ...figure, value: round(figure.value), ...baseline }));
}

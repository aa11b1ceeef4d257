/**
 * The throughput bench's arithmetic, pure: spans of time per issue (inside the model stand-in, in CI), the
 * runners' busy slots, the issues waiting for one, and what that says about where the factory's limit is.
 */

/** From `start` to `end`, epoch ms. */
export type Span = { start: number; end: number };

/** How long the spans cover together, overlaps counted once. */
export function covered(spans: readonly Span[]): number {
  const sorted = [...spans].filter((s) => s.end > s.start).sort((a, b) => a.start - b.start);
  let total = 0;
  let reach = Number.NEGATIVE_INFINITY;
  for (const { start, end } of sorted) {
    if (end <= reach) continue;
    total += end - Math.max(start, reach);
    reach = end;
  }
  return total;
}

/** The part of `spans` inside `within`. */
export function clip(spans: readonly Span[], within: Span): Span[] {
  return spans
    .map((s) => ({ start: Math.max(s.start, within.start), end: Math.min(s.end, within.end) }))
    .filter((s) => s.end > s.start);
}

/** An issue's edge as D1 records it. */
export type Edge = {
  number: number;
  seq: number;
  from: string;
  to: string;
  event: string;
  at: number;
  /** Why, where the issue recorded it (an escalation's reason). */
  reason?: string | null;
};

/** The spans an issue spent in each state, from its edges (oldest first); the last state runs until `until`. */
export function stateSpans(edges: readonly Edge[], until: number): Map<string, Span[]> {
  const spans = new Map<string, Span[]>();
  const ordered = [...edges].sort((a, b) => a.seq - b.seq);
  ordered.forEach((edge, i) => {
    const end = ordered[i + 1]?.at ?? until;
    spans.set(edge.to, [...(spans.get(edge.to) ?? []), { start: edge.at, end }]);
  });
  return spans;
}

/**
 * Over `window`, in steps of `stepMs`: how many of `slots` were busy (a job claimed and not yet done) and how
 * many issues waited for a job to start (`waiting`: their `queued` spans).
 */
export function slotUse(
  busy: readonly Span[],
  waiting: readonly Span[],
  slots: number,
  window: Span,
  stepMs = 20,
): {
  /** Busy slot-time over all slot-time. */
  busyShare: number;
  /** Idle slot-time while an issue waited for one (capped at the waiting issues), over all slot-time. */
  idleWhileWaitingShare: number;
  /** Time with every slot busy and an issue waiting, over the window. */
  saturatedShare: number;
  /** Time with no issue waiting and a slot idle (the work is past its sessions: CI, review, merge). */
  starvedShare: number;
} {
  const at = (spans: readonly Span[], t: number) => spans.filter((s) => s.start <= t && t < s.end).length;
  let steps = 0;
  let busySum = 0;
  let idleWaiting = 0;
  let saturated = 0;
  let starved = 0;
  for (let t = window.start; t < window.end; t += stepMs) {
    steps++;
    const inUse = Math.min(slots, at(busy, t));
    const queued = at(waiting, t);
    busySum += inUse;
    idleWaiting += Math.min(slots - inUse, queued);
    if (inUse === slots && queued > 0) saturated++;
    if (inUse < slots && queued === 0) starved++;
  }
  if (steps === 0) return { busyShare: 0, idleWhileWaitingShare: 0, saturatedShare: 0, starvedShare: 0 };
  return {
    busyShare: busySum / (steps * slots),
    idleWhileWaitingShare: idleWaiting / (steps * slots),
    saturatedShare: saturated / steps,
    starvedShare: starved / steps,
  };
}

/** A runner's log line about a job (runner/job.ts, runner/runner.ts). */
export type JobLine = { at: number; msg: string; job: string; issue: number };

/** The lines of a runner's log (JSON lines) that name a job and its issue. */
export function jobLines(log: string): JobLine[] {
  return log.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      const { time, msg, job, issue } = JSON.parse(line) as Record<string, unknown>;
      if (typeof time !== "string" || typeof msg !== "string" || typeof job !== "string") return [];
      return [{ at: Date.parse(time), msg, job, issue: typeof issue === "number" ? issue : 0 }];
    } catch {
      return [];
    }
  });
}

/** Busy slots: from a job's `claimed` to its last line (`job done`, failed …). */
export function busySpans(lines: readonly JobLine[]): Span[] {
  const open = new Map<string, number>();
  const spans: Span[] = [];
  for (const { at, msg, job } of lines) {
    if (msg === "claimed") open.set(job, at);
    else if (JOB_ENDS.test(msg) && open.has(job)) {
      spans.push({ start: open.get(job) ?? at, end: at });
      open.delete(job);
    }
  }
  return spans;
}

/** The runner's last line of a job (runner/job.ts). */
const JOB_ENDS = /^job (done|failed|cancelled|abandoned|interrupted)/;

/**
 * The p50 over issues of the time between consecutive milestones (each issue's first time at each), in the
 * order given; an issue missing one is left out of the two gaps around it.
 */
export function milestoneGaps(
  milestones: ReadonlyMap<number, ReadonlyMap<string, number>>,
  order: readonly string[],
  p50: (values: number[]) => number,
): { from: string; to: string; ms: number }[] {
  return order.slice(1).map((to, i) => {
    const from = order[i] ?? "";
    const gaps = [...milestones.values()].flatMap((own) => {
      const a = own.get(from);
      const b = own.get(to);
      return a === undefined || b === undefined ? [] : [b - a];
    });
    return { from, to, ms: p50(gaps) };
  });
}

/** Where at least `k` of the spans overlap, as disjoint spans in order. */
export function atLeast(spans: readonly Span[], k: number): Span[] {
  const events = spans.flatMap((s) => [
    { at: s.start, step: 1 },
    { at: s.end, step: -1 },
  ]);
  // Ends before starts at the same moment: spans that only touch do not overlap.
  events.sort((a, b) => a.at - b.at || a.step - b.step);
  const out: Span[] = [];
  let count = 0;
  let since = 0;
  for (const { at, step } of events) {
    const before = count;
    count += step;
    if (before < k && count >= k) since = at;
    if (before >= k && count < k && at > since) {
      // One span where another took over at the same moment.
      const previous = out.at(-1);
      if (previous?.end === since) previous.end = at;
      else out.push({ start: since, end: at });
    }
  }
  return out;
}

/** The time `spans` spend inside `within` (disjoint spans), overlaps among `spans` counted once. */
export function coveredWithin(spans: readonly Span[], within: readonly Span[]): number {
  return covered(within.flatMap((w) => clip(spans, w)));
}

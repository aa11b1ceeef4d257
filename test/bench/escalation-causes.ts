/**
 * Why the throughput bench's issues escalated: each escalated issue's reason (the `reason` D1 records with its
 * edge into `escalated`), counted by cause. A cause is the reason with what differs from issue to issue (commit
 * ids, branches and paths, numbers) replaced, so that one cause met by many issues counts once.
 */
import type { Edge } from "./throughput-timeline.ts";

const MAX_CAUSE = 160;

export function escalationCause(reason: string | null | undefined): string {
  if (!reason?.trim()) return "(no reason recorded)";
  const cause = reason
    .replace(/\b[0-9a-f]{7,64}\b/g, "<sha>")
    .replace(/[^\s,;:()'"`]*\/[^\s,;:()'"`]*/g, "<path>")
    .replace(/\d+/g, "<n>")
    .replace(/\s+/g, " ")
    .trim();
  return cause.length > MAX_CAUSE ? `${cause.slice(0, MAX_CAUSE - 1)}…` : cause;
}

/**
 * The issues whose last edge went into `escalated`, each with that edge's reason; and their counts by cause,
 * most first.
 */
export function escalations(edges: readonly Edge[]): {
  reasons: Map<number, string | null>;
  byCause: [string, number][];
} {
  const last = new Map<number, Edge>();
  for (const edge of edges) {
    const known = last.get(edge.number);
    if (!known || edge.seq > known.seq) last.set(edge.number, edge);
  }
  const reasons = new Map<number, string | null>();
  for (const [number, edge] of last) if (edge.to === "escalated") reasons.set(number, edge.reason ?? null);
  const counts = new Map<string, number>();
  for (const reason of reasons.values()) {
    const cause = escalationCause(reason);
    counts.set(cause, (counts.get(cause) ?? 0) + 1);
  }
  const byCause = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return { reasons, byCause };
}

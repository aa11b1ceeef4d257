import { edges, STATES } from "./lifecycle.ts";

/** A Mermaid state diagram of the lifecycle table, one arrow per (from, to) with its events. */
export function lifecycleMermaid(): string {
  const grouped = new Map<string, string[]>();
  for (const { from, event, to } of edges()) {
    const key = `${from} --> ${to}`;
    const events = grouped.get(key) ?? [];
    if (!events.includes(event)) events.push(event);
    grouped.set(key, events);
  }
  const lines = ["stateDiagram-v2", "  [*] --> new"];
  for (const [arrow, events] of grouped) lines.push(`  ${arrow}: ${events.join(", ")}`);
  for (const state of STATES)
    if (state === "merged" || state === "abandoned") lines.push(`  ${state} --> [*]`);
  return `${lines.join("\n")}\n`;
}

export function lifecycleDoc(): string {
  return [
    "# Issue lifecycle",
    "",
    "Generated from `src/domain/lifecycle.ts` by `npm run docs:lifecycle`; a test fails when it is stale.",
    "Only `running` and `revising` hold a runner slot.",
    "",
    "```mermaid",
    lifecycleMermaid().trimEnd(),
    "```",
    "",
  ].join("\n");
}

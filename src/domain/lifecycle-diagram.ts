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
    "Every waiting state has a timer (`src/domain/timers.ts`, durations in the project's `timeouts`), armed when",
    "the state is entered and kept across edges that stay in it: `timeout` leaves `running`/`revising` (session),",
    "`awaiting_ci` (ci), `awaiting_review` (review), `awaiting_approval` (approval) and `escalated` (escalation);",
    "in `merging` (merge) it asks the forge whether the pull request got merged, and in `escalated` (renotify)",
    "it comments again. `effect_failed`: an effect Conveyor gave up on (see the dead letter in docs/operating.md).",
    "",
    "```mermaid",
    lifecycleMermaid().trimEnd(),
    "```",
    "",
  ].join("\n");
}

/** The rows D1 answers the outcomes report's statements with (./queries.ts), in SQLite's column names. */

/** One issue that ended (merged, done, abandoned) in the window, with what its history says of it. */
export type FinishedRow = {
  at: number;
  ended: "merged" | "done" | "abandoned";
  /** Its first applied triage: when a writer's label queued it. */
  labeled_at: number | null;
  critic_rounds: number;
  /** Times it waited for a human: entries into escalated or awaiting_approval. */
  human_rounds: number;
  escalations: number;
  /** The state its first CI result took it to: awaiting_review is green the first time. */
  first_ci: string | null;
  usd: number;
};

export type UsageDayRow = {
  day: number;
  usd: number;
  input: number;
  cache_read: number;
  cache_write: number;
};

/** Edges since the window began, by (from, to, event), inside the window or after it, and their day there. */
export type EdgeRow = {
  from_state: string;
  to_state: string;
  event: string;
  inside: 0 | 1;
  day: number | null;
  n: number;
  /** Summed over the group's edges inside the window: from each to the window's end. */
  ms: number;
};

/** How many issues are in a state now. */
export type StateRow = { state: string; n: number };

export type OutcomeRows = {
  finished: FinishedRow[];
  edges: EdgeRow[];
  states: StateRow[];
  /** From the window's start to its end, or to now while it lasts. */
  windowMs: number;
  usage: UsageDayRow[];
};

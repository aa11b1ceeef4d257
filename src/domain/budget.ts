/**
 * Budgets: per issue (USD and turns, carried across iterations, never reset), per project per day, and per
 * project per day for the agent runs forge events start, which anyone who can open an issue or push to a pull
 * request can cause: their spend has its own cap and never pauses issue sessions. Pure.
 */

/** The event runs' own daily cap where a policy stored before it existed says none. */
export const DEFAULT_EVENT_DAILY_USD = 5;

export type BudgetLimits = {
  issueUsd: number;
  issueTurns: number;
  /** Turns one session may take, within what the issue has left. */
  sessionTurns: number;
  dailyUsd: number;
  /** What agent runs started by forge events may spend per UTC day, apart from `dailyUsd`. */
  eventDailyUsd: number;
};

export type Spend = { usd: number; turns: number };

/** Why the issue may spend no more, or null while it may. */
export function issueBudgetExceeded(spent: Spend, limits: BudgetLimits): string | null {
  if (spent.usd >= limits.issueUsd)
    return `spent $${spent.usd.toFixed(2)} of the issue's $${limits.issueUsd.toFixed(2)}`;
  if (spent.turns >= limits.issueTurns)
    return `took ${spent.turns} of the issue's ${limits.issueTurns} turns`;
  return null;
}

/** Why dispatch is paused for the rest of the UTC day, or null. */
export function dailyCapReached(spentTodayUsd: number, limits: BudgetLimits): string | null {
  return spentTodayUsd >= limits.dailyUsd
    ? `daily budget reached: $${spentTodayUsd.toFixed(2)} of $${limits.dailyUsd.toFixed(2)} spent today (UTC)`
    : null;
}

/**
 * What today's spend pauses: `work` (sessions and the operator's and schedules' agent runs), from what
 * everything but event runs spent; `events` (agent runs forge events started), from their own spend, and
 * whenever `work` is paused. Event runs' spend never pauses `work`.
 */
export function budgetPauses(
  spentTodayUsd: number,
  eventSpentTodayUsd: number,
  limits: BudgetLimits,
): { work: string | null; events: string | null } {
  const work = dailyCapReached(spentTodayUsd - eventSpentTodayUsd, limits);
  const cap = limits.eventDailyUsd;
  const events =
    eventSpentTodayUsd >= cap
      ? `event runs' daily budget reached: $${eventSpentTodayUsd.toFixed(2)} of $${cap.toFixed(2)} spent today (UTC)`
      : work;
  return { work, events };
}

/** What the next session of an issue may spend. */
export function sessionBudget(
  spent: Spend,
  limits: BudgetLimits,
): { maxTurns: number; usdRemaining: number } {
  return {
    maxTurns: Math.max(1, Math.min(limits.sessionTurns, limits.issueTurns - spent.turns)),
    usdRemaining: Math.max(0, Number((limits.issueUsd - spent.usd).toFixed(6))),
  };
}

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

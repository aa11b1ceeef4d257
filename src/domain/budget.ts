/** Budgets: per issue (USD and turns, carried across iterations, never reset) and per project per day. Pure. */

export type BudgetLimits = {
  issueUsd: number;
  issueTurns: number;
  /** Turns one session may take, within what the issue has left. */
  sessionTurns: number;
  dailyUsd: number;
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

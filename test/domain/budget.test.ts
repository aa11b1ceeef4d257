import { describe, expect, it } from "vitest";
import {
  budgetPauses,
  dailyCapReached,
  issueBudgetExceeded,
  sessionBudget,
  utcDay,
} from "../../src/domain/budget.ts";

const limits = { issueUsd: 5, issueTurns: 100, sessionTurns: 40, dailyUsd: 20, eventDailyUsd: 2 };

describe("issueBudgetExceeded", () => {
  it.each([
    [{ usd: 0, turns: 0 }, null],
    [{ usd: 4.99, turns: 99 }, null],
    [{ usd: 5, turns: 0 }, "spent $5.00 of the issue's $5.00"],
    [{ usd: 7.5, turns: 120 }, "spent $7.50 of the issue's $5.00"],
    [{ usd: 1, turns: 100 }, "took 100 of the issue's 100 turns"],
  ])("%j → %s", (spent, expected) => {
    expect(issueBudgetExceeded(spent, limits)).toBe(expected);
  });
});

describe("dailyCapReached", () => {
  it.each([
    [0, null],
    [19.99, null],
    [20, "daily budget reached: $20.00 of $20.00 spent today (UTC)"],
    [31.5, "daily budget reached: $31.50 of $20.00 spent today (UTC)"],
  ])("%s → %s", (spent, expected) => {
    expect(dailyCapReached(spent, limits)).toBe(expected);
  });
});

describe("budgetPauses", () => {
  const events = (spent: number) =>
    `event runs' daily budget reached: $${spent.toFixed(2)} of $2.00 spent today (UTC)`;
  it.each([
    ["nothing spent", 0, 0, { work: null, events: null }],
    ["event runs at their cap: sessions go on", 2, 2, { work: null, events: events(2) }],
    ["event runs far past it: sessions still go on", 500, 500, { work: null, events: events(500) }],
    [
      "sessions at the project's cap: event runs stop too",
      21,
      1,
      {
        work: "daily budget reached: $20.00 of $20.00 spent today (UTC)",
        events: "daily budget reached: $20.00 of $20.00 spent today (UTC)",
      },
    ],
  ])("%s", (_name, spent, eventSpent, expected) => {
    expect(budgetPauses(spent, eventSpent, limits)).toEqual(expected);
  });
});

describe("sessionBudget", () => {
  it.each([
    [
      { usd: 0, turns: 0 },
      { maxTurns: 40, usdRemaining: 5 },
    ],
    [
      { usd: 4.25, turns: 90 },
      { maxTurns: 10, usdRemaining: 0.75 },
    ],
    [
      { usd: 9, turns: 150 },
      { maxTurns: 1, usdRemaining: 0 },
    ],
  ])("after %j: %j", (spent, expected) => {
    expect(sessionBudget(spent, limits)).toEqual(expected);
  });
});

it("days are UTC", () => {
  expect(utcDay(Date.UTC(2026, 10, 22, 23, 59, 59))).toBe("2026-11-22");
  expect(utcDay(Date.UTC(2026, 10, 23, 0, 0, 0))).toBe("2026-11-23");
});

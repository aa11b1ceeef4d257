/**
 * A CI check that flips: failed, then passed when re-run with nothing changed (src/domain/ci-rerun.ts records
 * each re-run's result). Once is infrastructure; again and again it is a flaky check, which every time costs
 * a re-run and the wait for it, and hides a real failure among the flips: a supervisor finding (P3) for a
 * human to fix or quarantine it. Pure: the supervisor's snapshot reads the flips from D1 (`ci_reruns`).
 */
import type { Finding } from "./supervisor.ts";

/** Flips of one check within `FLAKY_WINDOW_MS` (src/domain/ci-rerun.ts) that make it a finding. */
export const FLIPS_FOR_FINDING = 2;

/** A check that passed on re-run `flips` times within the window, the last at `lastAt`. */
export type FlakyCheck = { name: string; flips: number; lastAt: number };

export function flakyFindings(checks: readonly FlakyCheck[]): Finding[] {
  return checks
    .filter((check) => check.flips >= FLIPS_FOR_FINDING)
    .map((check) => ({
      key: `flaky_check:${check.name}`,
      priority: "P3",
      check: "flaky_check",
      subject: `check ${check.name}`.slice(0, 200),
      summary:
        `CI check \`${check.name}\` failed and then passed on re-run ${check.flips} times in the last 7 days: ` +
        "each flip costs a CI re-run and hides real failures. Fix the check, or quarantine it from the " +
        "required checks (`ci.requiredChecks`).",
    }));
}

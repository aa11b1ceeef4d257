/**
 * The ProjectDO's review runs: which agent runs review a pull request (the `reviewer` on a runner), at which
 * head, for which issue. An issue's review run ends in exactly one answer to its issue: the accepted
 * `submit_review`, applied by ./review-run-apply.ts, or `review_failed` when the run brought no valid review
 * (it failed, was cancelled, asked for none, or its request was rejected) — never read as APPROVE.
 */
import type { KeptDecision } from "../../../src/agents/held-outputs.ts";
import type { ReviewBinding } from "../../../src/agents/review-run.ts";
import type { EventEnvelope } from "../../../src/issue-events.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS review_runs (
  run_id TEXT PRIMARY KEY,
  number INTEGER,
  pr INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  review_key TEXT NOT NULL,
  answered INTEGER NOT NULL DEFAULT 0
);
`;

type Row = {
  run_id: string;
  number: number | null;
  pr: number;
  head_sha: string;
  review_key: string;
  answered: number;
};

/** The envelope id the issue dedupes a review run's answer by: one answer per run, whichever it is. */
export const reviewAnswerId = (runId: string) => `review-run:${runId}`;

/** Thin typed access; every write method is meant to run inside `transactionSync`. */
export class ReviewRuns {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  bind(runId: string, binding: ReviewBinding): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO review_runs (run_id, number, pr, head_sha, review_key) VALUES (?, ?, ?, ?, ?)",
      runId,
      binding.number,
      binding.pr,
      binding.headSha,
      binding.key,
    );
  }

  of(runId: string): ReviewBinding | null {
    const row = this.sql.exec<Row>("SELECT * FROM review_runs WHERE run_id = ?", runId).toArray()[0];
    return row ? { number: row.number, pr: row.pr, headSha: row.head_sha, key: row.review_key } : null;
  }

  /**
   * The run's outputs were decided: an accepted review will be applied (one held in the vault waits for its
   * decision: a rejection fails it then); without one, the issue hears `review_failed` (the envelope to send,
   * once).
   */
  decided(project: string, runId: string, decisions: readonly KeptDecision[]): EventEnvelope | null {
    const review = decisions.find((d) => d.status === "accepted" && d.output.type === "submit_review");
    if (review) {
      if (!review.vault) this.answer(runId);
      return null;
    }
    const refused = decisions.find((d) => d.output.type === "submit_review" && d.status === "rejected");
    const reason = refused?.status === "rejected" ? refused.reason : "the reviewer submitted no review";
    return this.failed(project, runId, `the reviewer's review was not valid: ${reason}`);
  }

  /** The run ended without a completion (failed for good, cancelled): `review_failed`, once. */
  failed(project: string, runId: string, reason: string): EventEnvelope | null {
    const binding = this.of(runId);
    if (!binding || binding.number === null || !this.answer(runId)) return null;
    return {
      id: reviewAnswerId(runId),
      project,
      number: binding.number,
      cause: { kind: "job", id: runId },
      event: { type: "review_failed", reason: reason.slice(0, 2_000), headSha: binding.headSha },
    };
  }

  /** Marks the run answered; false when it was already. */
  private answer(runId: string): boolean {
    return (
      this.sql.exec("UPDATE review_runs SET answered = 1 WHERE run_id = ? AND answered = 0", runId)
        .rowsWritten > 0
    );
  }
}

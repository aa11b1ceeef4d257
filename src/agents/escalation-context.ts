/**
 * What a triage run reads of the escalation it answers, built from the issue's own record and shown in its
 * prompt (./context.ts). Pure.
 */
import type { FailedCheck } from "../domain/ci-verdict.ts";
import type { Escalation } from "../domain/escalation.ts";

/** What a triage run is told of the escalation (data written partly by people and sessions: never trusted). */
export type EscalationContext = {
  issue: { number: number; title: string; body: string };
  escalation: Escalation;
  state: string;
  reason: string | null;
  /** The last session's own account of what it did, if it gave one. */
  sessionSummary: string | null;
  /** The issue's lifecycle, oldest first: each event and the edge it took (or why it was refused). */
  history: { at: string; event: string; from: string; to: string; outcome: string; reason?: string }[];
  /** Effects Conveyor gave up on, with the forge's last answer. */
  deadLetters: { effect: string; attempts: number; error: string }[];
  /** The failing checks of the latest red CI result, with what each reported. */
  failingChecks: { name: string; outcome: string; description?: string }[];
};

/** An entry of the issue's history, as its object keeps it (src/contracts/issue-object.ts, `HistoryEntry`). */
type RecordedEdge = {
  at: number;
  event: string;
  from: string;
  to: string;
  outcome: string;
  reason: string | null;
  ci?: { result: "green" | "red"; checks: FailedCheck[] };
};

/** At most this many history entries, each reason cut at this length: the prompt stays bounded. */
export const TRIAGE_HISTORY = 40;
const MAX_TEXT = 1_000;
const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text);

/** The escalation as a triage run reads it, from the issue's own record. Pure. */
export function escalationContext(
  issue: { number: number; state: string; reason: string | null; summary: string | null },
  escalation: Escalation,
  text: { title: string; body: string },
  history: readonly RecordedEdge[],
  deadLetters: readonly { kind: string; attempts: number; error: string }[],
): EscalationContext {
  const red = [...history].reverse().find((entry) => entry.ci?.result === "red");
  return {
    issue: { number: issue.number, title: text.title, body: cut(text.body) },
    escalation,
    state: issue.state,
    reason: issue.reason === null ? null : cut(issue.reason),
    sessionSummary: issue.summary ? cut(issue.summary) : null,
    history: history.slice(-TRIAGE_HISTORY).map((entry) => ({
      at: new Date(entry.at).toISOString(),
      event: entry.event,
      from: entry.from,
      to: entry.to,
      outcome: entry.outcome,
      ...(entry.reason && { reason: cut(entry.reason) }),
    })),
    deadLetters: deadLetters.map((letter) => ({
      effect: letter.kind,
      attempts: letter.attempts,
      error: cut(letter.error),
    })),
    failingChecks: (red?.ci?.checks ?? []).map(({ name, outcome, description }) => ({
      name,
      outcome,
      ...(description && { description: cut(description) }),
    })),
  };
}

/** What a triage run reads of the escalation it answers (built by ./triage-run.ts, shown by ./context.ts). */
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

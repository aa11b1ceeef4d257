/**
 * Escalations: why an issue stopped for a human (its cause, recorded with the escalation), which causes are
 * known to be transient and are retried automatically instead — each once per issue — and the proposed next
 * step a triage agent gives each escalation, which a writer accepts with `/conveyor accept`. Pure: the
 * lifecycle table (./lifecycle.ts) applies these decisions.
 */
import type { FailureShape } from "./failure.ts";
import type { IssueContext, LifecycleEvent, State } from "./lifecycle.ts";
import { underspecifiedReason } from "./phase.ts";

export const ESCALATION_CAUSES = [
  /** The session asked for a human (PHASE:escalate). */
  "session_escalated",
  /** The session judged the issue too vague or too large to implement. */
  "underspecified",
  /** The session failed, ended without a phase or with one it may not claim. */
  "session_failed",
  /** Every attempt of the session lost its runner: its lease expired, or its runner was revoked. */
  "runner_lost",
  /** No runner confirmed taking the job, time after time. */
  "runner_unconfirmed",
  "session_timeout",
  /** CI still red after the fix sessions the project allows. */
  "ci_cap",
  /** CI red for its infrastructure (cancelled, timed out, a runner lost), not for the change. */
  "ci_infrastructure",
  "ci_timeout",
  "critic_cap",
  "critic_block",
  "critic_failed",
  "review_timeout",
  /** Behind or in conflict with its base after the updates the project allows. */
  "base_updates",
  "head_mismatch",
  "merge_failed",
  "budget",
  /** An effect the forge refused for good. */
  "dead_letter",
  /** An effect given up on while the forge did not answer (5xx, no answer at all). */
  "forge_unreachable",
  "other",
] as const;
export type EscalationCause = (typeof ESCALATION_CAUSES)[number];

/** The issue's `n`-th escalation: why, and the state it stopped in. */
export type Escalation = { n: number; cause: EscalationCause; from: State };

/** Why an event that escalated the issue did, as one of the known causes. */
export function escalationCause(event: LifecycleEvent): EscalationCause {
  switch (event.type) {
    case "phase":
      if (event.refused) return "session_failed";
      if (event.phase === "escalate")
        return underspecifiedReason(event.reason) === null ? "session_escalated" : "underspecified";
      if (event.phase === "failed" && event.lost) return "runner_lost";
      return "session_failed";
    case "lease_unconfirmed":
      return "runner_unconfirmed";
    case "timeout":
      if (event.timer === "session") return "session_timeout";
      if (event.timer === "ci") return "ci_timeout";
      return event.timer === "review" ? "review_timeout" : "other";
    case "ci":
      return event.infrastructure ? "ci_infrastructure" : "ci_cap";
    case "review":
      return event.verdict === "BLOCK" ? "critic_block" : "critic_cap";
    case "review_failed":
      return "critic_failed";
    case "branch_updated":
    case "conflict":
      return "base_updates";
    case "head_mismatch":
      return "head_mismatch";
    case "merge_failed":
      return "merge_failed";
    case "budget_exceeded":
      return "budget";
    case "effect_failed":
      return event.transient ? "forge_unreachable" : "dead_letter";
    case "forge_recovered":
      return "forge_unreachable";
    default:
      return "other";
  }
}

/**
 * Causes known to be transient: what failed was the machinery around the work (a runner, CI's
 * infrastructure, the forge), not the work; trying again is the likely fix.
 */
export const TRANSIENT_CAUSES = [
  "runner_lost",
  "ci_infrastructure",
  "forge_unreachable",
] as const satisfies readonly EscalationCause[];
export type TransientCause = (typeof TRANSIENT_CAUSES)[number];

export const isTransient = (cause: EscalationCause): cause is TransientCause =>
  (TRANSIENT_CAUSES as readonly string[]).includes(cause);

/** The bound: each transient cause is retried automatically this many times per issue; then a human decides. */
export const AUTOMATIC_RETRIES = 1;

/** Whether `cause` is retried automatically, given the automatic retries the issue already had. */
export function retriesAutomatically(
  cause: EscalationCause,
  retried: readonly EscalationCause[],
): cause is TransientCause {
  return isTransient(cause) && retried.filter((c) => c === cause).length < AUTOMATIC_RETRIES;
}

/** How long an automatic retry of an unreachable forge waits for it to answer again before a human is asked. */
export const FORGE_RECOVERY_WAIT_MS = 24 * 60 * 60_000;

/**
 * Whether a failure is the forge not serving (no answer at all, a timeout, too many requests, a 5xx): worth
 * waiting for it to answer again. Any other answer, a refusal (401, 403, 404, 422...), is the forge speaking:
 * waiting changes nothing.
 */
export function forgeUnreachable(failure: FailureShape): boolean {
  if (failure.waiting) return false;
  const { status } = failure;
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

/** At most this many effects given up on while the forge did not answer are sent again when it answers. */
export const MAX_RECOVERED_EFFECTS = 50;

/** An automatic retry waiting for the forge to answer: the dead letters to send again, the first of them. */
export type Recovery = { deadLetters: number[]; effect: string; error: string };

const TRANSIENT_WHAT: Record<TransientCause, string> = {
  runner_lost: "the session's runner was lost on every attempt",
  ci_infrastructure: "CI failed for its infrastructure, not for the change",
  forge_unreachable: "the forge did not answer",
};

const ONCE = `Conveyor retries each such cause automatically ${AUTOMATIC_RETRIES === 1 ? "once" : `${AUTOMATIC_RETRIES} times`} per issue; if it happens again, the issue waits for a human.`;

/** What Conveyor says on the issue when it retries it itself. */
export function automaticRetryNotice(cause: TransientCause, reason: string): string {
  return `**Retried automatically.** ${capitalized(TRANSIENT_WHAT[cause])} (${reason}); that is known to be transient, so Conveyor starts the issue again. ${ONCE}`;
}

/** What Conveyor says once the forge answers again and the effects it gave up on are sent again. */
export function recoveryNotice(recovery: Recovery): string {
  const count = recovery.deadLetters.length;
  const what = count === 1 ? `\`${recovery.effect}\`` : `${count} actions, the first \`${recovery.effect}\``;
  return `**Retried automatically.** The forge did not answer for a while, and Conveyor gave up on ${what} (${recovery.error}). It answers again: Conveyor sends what it gave up on again, and the issue goes on. ${ONCE}`;
}

const capitalized = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

// --- the triage's proposed next step ----------------------------------------------------------------------

export const STEP_KINDS = ["retry", "split", "clarify", "abandon"] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export type IssuePart = { title: string; body: string };

/**
 * The next step a triage agent proposes: a fresh session with a hint, the issue split into parts, a question
 * for the issue's author, or letting it go.
 */
export type ProposedStep =
  | { kind: "retry"; hint: string }
  | { kind: "split"; parts: IssuePart[] }
  | { kind: "clarify"; question: string }
  | { kind: "abandon" };

/** A triage agent's answer to escalation `escalation`: what went wrong, and the step it proposes. */
export type Proposal = {
  escalation: number;
  runId: string;
  agent: string;
  diagnosis: string;
  step: ProposedStep;
};

/** What accepting the step does, in Conveyor's words. */
const ACCEPTING: { [K in StepKind]: (step: Extract<ProposedStep, { kind: K }>) => string } = {
  retry: () => "Conveyor starts the issue again with a fresh session, given the hint below",
  split: (step) =>
    `Conveyor files the ${step.parts.length} parts below as new issues, queues them, and closes this one`,
  clarify: () =>
    "Conveyor asks the question below here and labels the issue underspecified; a writer's reply then resumes the session",
  abandon: () => "Conveyor abandons the issue",
};

const STEP_NAMES: Record<StepKind, string> = {
  retry: "retry with a hint",
  split: "split the issue",
  clarify: "ask the issue's author",
  abandon: "abandon the issue",
};

/** How the proposal's comment opens: what a reader (the demo's maintainer) knows it by. */
export const TRIAGE_HEADING = "**Triage of this escalation.**";

/** A proposed step in Conveyor's words: its name, and what accepting it does (the comment's, the dashboard's). */
export const stepWords = (step: ProposedStep): { name: string; accepting: string } => ({
  name: STEP_NAMES[step.kind],
  accepting: (ACCEPTING[step.kind] as (step: ProposedStep) => string)(step),
});

/** The proposal's comment: Conveyor's account of it and how to accept it, then the agent's own words apart. */
export function proposalComment(p: Proposal): { body: string; quote: { by: string; text: string } } {
  const { name, accepting } = stepWords(p.step);
  return {
    body: [
      `${TRIAGE_HEADING} Proposed next step: **${name}**.`,
      `A user with write access accepts it by commenting \`/conveyor accept\`: ${accepting}. Otherwise reply here, or comment \`/conveyor retry\` or \`/conveyor abandon\`, as before.`,
    ].join("\n\n"),
    quote: { by: `The agent \`${p.agent}\` (run \`${p.runId}\`)`, text: proposalText(p) },
  };
}

/** The agent's words of a proposal, as quoted under its name. */
function proposalText(p: Proposal): string {
  const { step } = p;
  const detail =
    step.kind === "retry"
      ? `**Hint for the next session:** ${step.hint}`
      : step.kind === "clarify"
        ? `**Question:** ${step.question}`
        : step.kind === "split"
          ? ["**Parts:**", ...step.parts.map((part, i) => `${i + 1}. ${part.title}`)].join("\n")
          : "**Abandon it.**";
  return `**What went wrong:** ${p.diagnosis}\n\n${detail}`;
}

/** Why a writer's `/conveyor accept` finds nothing to accept in `ctx`, or null when the proposal stands. */
export function acceptRefusal(
  ctx: Pick<IssueContext, "proposal" | "escalation"> & { state: string },
): string | null {
  const { proposal, escalation } = ctx;
  if (!proposal) return "no triage proposal waits to be accepted";
  if (ctx.state !== "escalated" && ctx.state !== "abandoned")
    return `the issue is ${ctx.state}: the triage proposal was for an escalation it has left`;
  if (proposal.escalation !== escalation?.n)
    return `the triage proposal was for escalation ${proposal.escalation}, and the issue is at escalation ${escalation?.n ?? 0}`;
  return null;
}

/** Why a triage proposal does not answer the escalation the issue is in, or null when it does. */
export function staleProposal(ctx: IssueContext, escalation: number): string | null {
  if (ctx.state !== "escalated" && ctx.state !== "abandoned")
    return `stale: the issue is ${ctx.state}, no longer waiting on escalation ${escalation}`;
  if (ctx.escalation?.n !== escalation)
    return `stale: the proposal answers escalation ${escalation}, and the issue is at escalation ${ctx.escalation?.n ?? 0}`;
  if (ctx.proposal?.escalation === escalation) return `escalation ${escalation} has its proposal already`;
  return null;
}

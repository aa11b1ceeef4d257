/**
 * The issue lifecycle as a pure table: (state, event) → next state and effects, or a rejection with a reason.
 * The IssueDO applies it; nothing here does I/O.
 */
import { type CiRerun, DEFAULT_CI_RERUNS, type RerunTarget, rerunDecision } from "./ci-rerun.ts";
import type { FailedCheck } from "./ci-verdict.ts";
import { MAX_DEPENDENCIES } from "./dependencies.ts";
import {
  acceptRefusal,
  automaticRetryNotice,
  type Escalation,
  type EscalationCause,
  escalationCause,
  FORGE_RECOVERY_WAIT_MS,
  type IssuePart,
  MAX_RECOVERED_EFFECTS,
  type Proposal,
  proposalComment,
  type Recovery,
  recoveryNotice,
  retriesAutomatically,
  staleProposal,
} from "./escalation.ts";
import {
  type Feedback,
  feedbackInstructions,
  holdReason,
  holdsMerge,
  type ReviewHold,
  type ReviewVerdict,
  sameHolds,
  shownNotObeyed,
  wantsRound,
  withFeedback,
  withPending,
} from "./human-review.ts";
import { PHASES as FILE_PHASES, underspecifiedReason } from "./phase.ts";

export const STATES = [
  "new",
  "blocked",
  "queued",
  "running",
  "awaiting_ci",
  "awaiting_review",
  "revising",
  "awaiting_approval",
  "merging",
  "escalated",
  "merged",
  "abandoned",
  /** An `action` issue whose session finished its formula: closed with the session's summary. */
  "done",
] as const;
export type State = (typeof STATES)[number];

export const TERMINAL_STATES: readonly State[] = ["merged", "abandoned", "done"];

/**
 * `code`: an issue implemented as a change (pull request, CI, critic, merge). `action`: an operational task
 * (labelled `action`) whose session follows a formula (src/formulas/formula.ts) and has no pull request: its
 * dangerous steps wait for the vault, its questions for a human's reply, and it ends `done` or `abandoned`.
 */
export type IssueKind = "code" | "action";

/** Only sessions at work hold one of the project's `parallel` slots; waiting states hold none. */
export function holdsSlot(state: State): boolean {
  return state === "running" || state === "revising";
}

/** The phase-file phases, plus the end of a session that wrote none. */
export const PHASES = [...FILE_PHASES, "dry_exit"] as const;
export type Phase = (typeof PHASES)[number];

/**
 * `merge`: how long `merging` waits before asking the forge whether the pull request got merged; `renotify`:
 * how often an escalation reminds its humans; `retention` runs beside the state's own timer: how long the
 * worktree of an issue waiting for a human (or abandoned with nobody answering) is kept on its runner before
 * a reap job removes it.
 */
export const TIMERS = [
  "session",
  "ci",
  "review",
  "merge",
  "escalation",
  "renotify",
  "retention",
  /** An action session waiting for a human's reply ends after this (4 h): its work is operational, not kept. */
  "idle",
  /**
   * Waiting for a runner to start the issue's job (`queued`, or a continuation not dispatched yet): after
   * this (24 h) the issue says so, and again every period; it keeps its place in the queue.
   */
  "dispatch",
] as const;
export type TimerKind = (typeof TIMERS)[number];

export type Verdict = "APPROVE" | "REQUEST_CHANGES" | "BLOCK";

export type LifecycleEvent =
  /**
   * The issue entered the backlog (label, cron, operator); blockers are its still-open dependencies. `brief`:
   * the issue's text as a writer queued it, what its session will be given. `action`: the issue is labelled
   * `action` and names this formula; its lifecycle is an action's from then on.
   */
  | ({ type: "triage"; brief?: Brief; action?: { formula: string } } & GateFindings)
  /** The issue's dependencies changed (body edited, a dependency closed). */
  | ({ type: "dependencies" } & GateFindings)
  /** A runner claimed the issue's job (and confirmed its lease): attempt `attempt` of job `jobId`. */
  | { type: "dispatched"; jobId: string; runnerId: string; attempt?: number }
  /**
   * No runner confirmed the lease on the issue's job `jobId` `count` times in a row (a runner that takes it
   * and dies, an answer that never arrives): it is offered again in `retryInMs`, with backoff from then on;
   * `gaveUp`: past the project's `jobs.maxUnconfirmed` the job ended, and a human must look.
   */
  | { type: "lease_unconfirmed"; jobId: string; count: number; retryInMs?: number; gaveUp?: true }
  /**
   * A session ended a phase (phase file), or ended without one (dry_exit). `jobId`/`attempt`: the job run
   * that reports it; absent only in events queued before jobs said so.
   */
  | {
      type: "phase";
      phase: Phase;
      jobId?: string;
      attempt?: number;
      reason?: string;
      sessionId?: string;
      branch?: string;
      headSha?: string;
      /** The session's closing words: what the pull request's description says it changed. */
      summary?: string;
      /** `vault` (action sessions): the formula step that waits for the vault's approval. */
      step?: string;
      /**
       * The Worker checked the action session's claim against its facts and it does not stand
       * (src/domain/action-claims.ts): the issue escalates with this reason instead of taking the phase.
       */
      refused?: string;
      /** `failed`: the job ran out of attempts because its runner was lost on each (lease expired, revoked). */
      lost?: true;
    }
  /**
   * `checks`: the failing checks of a red result, for a human (the excerpt is what a revise session reads).
   * `fingerprint`: what identifies the commit's CI as read; `rerun`: the CI can run every failing check again,
   * none having failed for the change's sake (src/domain/ci-rerun.ts); `rerunRefused`: a re-run was asked
   * for and the CI refused it, so this red goes to a fix session; `infrastructure`: every failing check failed
   * for CI's infrastructure, not the change (src/domain/escalation.ts retries it once automatically).
   */
  | {
      type: "ci";
      result: "green" | "red";
      headSha: string;
      excerpt?: string;
      checks?: FailedCheck[];
      fingerprint?: string;
      rerun?: RerunTarget[];
      rerunRefused?: string;
      infrastructure?: true;
    }
  /**
   * The forge's branch is not at the head sha a runner reported (`actual` null: no such branch). `seenBy: "ci"`:
   * read with CI's verdict, by a reader that took the issue to be waiting for CI.
   */
  | { type: "head_mismatch"; branch: string; claimed: string; actual: string | null; seenBy?: "ci" }
  /**
   * `needsHumanApproval`: why the merge waits for a human (protected paths, an unreadable file list).
   * `headSha`: the commit reviewed, when the review comes from a runner's reviewer run: a review of another
   * head than the issue's is stale and refused.
   */
  | { type: "review"; verdict: Verdict; summary: string; needsHumanApproval?: string; headSha?: string }
  /**
   * The forge merged the base into the pull request's head (its update-branch API) before the review or the
   * merge: `headSha` is the new head, which needs CI and a verdict of its own.
   */
  | { type: "branch_updated"; headSha: string }
  /** The pull request conflicts with the base; `files`: the conflicting paths, where known. */
  | { type: "conflict"; files: string[] }
  /** The critic gave no valid report, even when asked again: a human looks, it is never read as APPROVE. */
  | { type: "review_failed"; reason: string; headSha?: string }
  /** A pull request for the issue's branch exists on the forge with this number. */
  | ({ type: "pr_opened" } & PullRef)
  | ({ type: "merge_confirmed"; sha?: string } & PullRef)
  | { type: "merge_failed"; reason: string }
  /**
   * The forge refused the merge for want of approvals Conveyor cannot give (branch protection): the merge
   * waits for a person, in the vault, instead of escalating. `reason`: what is missing.
   */
  | { type: "merge_needs_approval"; reason: string }
  /** A pull request was closed without merging by someone other than Conveyor. */
  | ({ type: "pr_closed" } & PullRef)
  /**
   * The issue was closed on the forge by someone other than Conveyor. `unmerged`: Conveyor has since read
   * from the forge that the issue's pull request is not merged (see `check_merged`).
   */
  | { type: "issue_closed"; unmerged?: true }
  | { type: "human_reply"; author: string; text: string }
  /**
   * A person's review or comment on the issue's pull request (src/domain/human-review.ts): `text` is what the
   * session reads (the lines it points at included). `writer`: they have write access and are obeyed; anyone
   * else's is recorded for the issue's page, not obeyed. `round`: it asks for a round of its own (changes
   * requested, comments on lines, or a comment where the project says so); otherwise it waits for the
   * session's next round. A `dismissed` one names the reviewer whose review was dismissed.
   */
  | {
      type: "pr_review";
      by: string;
      verdict: ReviewVerdict;
      text: string;
      writer: boolean;
      round: boolean;
      lines: number;
    }
  /** A writer's `/conveyor merge`: the change requests of these reviews no longer hold the merge. */
  | { type: "merge_command"; by: string; overrides: number[] }
  /** The merge found writers' change requests standing on the pull request: it waits for them. */
  | { type: "merge_held"; holds: ReviewHold[] }
  /**
   * A writer approved the pull request held for a human. `headSha`: the commit the approval is for (the forge's
   * review says); absent from the operator's approval, which is for the head the issue is at.
   */
  | { type: "human_approval"; by: string; headSha?: string }
  /** The vault holds the item this issue waits on (`vault_request`'s answer): its id, for humans to name. */
  | { type: "vault_requested"; itemId: string }
  /**
   * The vault decided the item this issue waits on (durable-objects/project/vault.ts): approved (and fired), rejected
   * or expired; `by`: a forge login, `operator`, `policy` or `timeout`. The item is a held merge's, or an
   * action's dangerous step.
   */
  | {
      type: "vault_decision";
      itemId: string;
      decision: "approved" | "rejected" | "expired";
      by: string;
      reason?: string;
    }
  | { type: "abandon"; by: string }
  | { type: "retry"; by: string }
  | { type: "timeout"; timer: TimerKind }
  | { type: "budget_exceeded"; reason: string }
  /**
   * An answer to someone on the forge (a refused command) on `thread`: posted once, nothing else changes.
   * `to`: the person answered, whom it may mention; `quote`: text another wrote (an action's progress note).
   */
  | { type: "reply"; thread: number; text: string; to?: string; quote?: Quote }
  /**
   * An effect was given up on (refused for good, or failing after the project's `effects.maxAttempts`): it
   * sits in the dead letter `deadLetter` with its last error, and a human must look — unless the failure was
   * `transient` (the forge did not answer) and the issue may still be retried for that automatically.
   */
  | { type: "effect_failed"; effect: string; error: string; transient?: true; deadLetter?: number }
  /**
   * The forge answered again (`answered`), or did not within the wait (src/domain/escalation.ts), while effects
   * given up on wait for it to be sent again.
   */
  | { type: "forge_recovered"; answered: boolean }
  /** A triage agent's answer to an escalation: what went wrong, and the next step it proposes. */
  | { type: "triage_proposal"; proposal: Proposal }
  /** A writer accepted the triage's proposed step (`/conveyor accept`). */
  | { type: "accept"; by: string };
export type EventType = LifecycleEvent["type"];

/**
 * The pull request an event is about. `byConveyor`: opened by Conveyor's account from the project
 * repository's own `conveyor/<n>` branch (src/domain/pull-requests.ts), not from a fork or by anyone else.
 */
export type PullRef = { number: number; byConveyor: boolean };

/** An issue's text as a user with write access queued it, and who that was. */
export type Brief = { title: string; body: string; by: string };

/**
 * What the dependency gate found: the still-open dependencies, the cycle the issue sits in, or `tooMany`, the
 * number of dependencies it declares beyond what is read (then none were read, and blockers is empty).
 */
export type GateFindings = { blockers: string[]; cycle?: string[]; tooMany?: number };

export const EVENT_TYPES = [
  "triage",
  "dependencies",
  "dispatched",
  "lease_unconfirmed",
  "phase",
  "ci",
  "head_mismatch",
  "review",
  "review_failed",
  "branch_updated",
  "conflict",
  "pr_opened",
  "merge_confirmed",
  "merge_failed",
  "merge_needs_approval",
  "pr_closed",
  "issue_closed",
  "human_reply",
  "pr_review",
  "merge_command",
  "merge_held",
  "human_approval",
  "vault_requested",
  "vault_decision",
  "abandon",
  "retry",
  "timeout",
  "budget_exceeded",
  "reply",
  "effect_failed",
  "forge_recovered",
  "triage_proposal",
  "accept",
] as const satisfies readonly EventType[];

/** Text someone other than Conveyor wrote, and who: posted quoted apart under that name. */
export type Quote = { by: string; text: string };

/** Label roles; the project maps them to its own label names. */
export type LabelRole = "backlog" | "in_progress" | "blocked" | "needs_human" | "underspecified";

export type JobKind = "implement" | "revise" | "resume" | "update" | "reap";

export type Effect =
  | {
      kind: "enqueue_job";
      job: JobKind;
      reason?: string;
      detail?: string;
      /** An action's step the vault approved, and the vault item that approved it. */
      approved?: { step: string; item: string };
    }
  | { kind: "cancel_jobs" }
  | { kind: "labels"; add: LabelRole[]; remove: LabelRole[] }
  /** `reminder`: the escalation is still unanswered (the `renotify` timer). */
  | { kind: "notify_human"; reason: string; reminder?: true }
  /**
   * On the issue, or on `thread` (a pull request of it) where the comment answers one there. The body is
   * defused when posted (src/forge/post); `to` may be mentioned in it, `quote` is shown apart under its author.
   */
  | { kind: "comment"; body: string; thread?: number; to?: string; quote?: Quote }
  | { kind: "open_pull_request" }
  /** Rewrites the open pull request's description: what the latest session did, and how CI and the critic went. */
  | { kind: "describe_pull_request" }
  | { kind: "request_review" }
  /**
   * Watch the head's CI until it settles: poll where the forge sends no CI webhooks. `after`: the red result
   * (its fingerprint) a re-run answers, read as still running.
   */
  | { kind: "watch_ci"; after?: string }
  /**
   * Runs the head's failed checks again through their CI's API (src/domain/ci-rerun.ts), while its CI is still
   * the red result `of` (its fingerprint).
   */
  | { kind: "rerun_ci"; targets: RerunTarget[]; of: string }
  | { kind: "merge" }
  /** Puts the held merge of the current head in the vault (`protected_merge`); answered by `vault_requested`. */
  | { kind: "vault_request"; reason: string }
  /** A human approved the held merge here (a review, the operator): the vault decides, and answers once. */
  | { kind: "vault_approve"; itemId: string; by: string }
  /** The issue acted on its held merge's approval: the item fires (an action's step fires when it runs). */
  | { kind: "vault_fired"; itemId: string }
  /** The issue no longer waits on this item (it left the state that asked for it): nobody may decide it. */
  | { kind: "vault_withdraw"; itemId: string; reason: string }
  /** Read whether the issue's pull request is merged, once the merge ahead of it has its answer. */
  | { kind: "check_merged" }
  /**
   * The merge timer ran out: read whether the pull request is merged (merge_confirmed) or not (merge_failed).
   * In its own lane, so a merge stuck in its lane cannot hold it back.
   */
  | { kind: "check_merge" }
  /**
   * The issue left the merge path (src/domain/merge-queue.ts): out of the project's merge queue, and the turn
   * passes on if it held it. Not decided by the table: the IssueDO adds it to every edge that leaves the path.
   */
  | { kind: "leave_merge_queue" }
  | { kind: "close_issue" }
  /** Deletes the merged `conveyor/<n>` on the forge, unless the project keeps branches. */
  | { kind: "delete_branch" }
  | { kind: "notify_dependents" }
  /** An action's dangerous step asks the vault for a decision (it answers with `vault_decision`). */
  | { kind: "vault_step"; step: string }
  /** Ask the forge whether it answers again, with backoff: `forge_recovered` says when it does (or not in time). */
  | { kind: "probe_forge" }
  /** Send these dead letters again, each back in its lane where it was. */
  | { kind: "resend_dead_letters"; ids: number[] }
  /** File the parts a writer accepted as new issues, queued in `by`'s name, and say so on this one. */
  | { kind: "split_issue"; parts: IssuePart[]; by: string }
  /** Start the triage of escalation `escalation` (src/agents/triage-run.ts): it answers with `triage_proposal`. */
  | { kind: "request_triage"; escalation: number };

export type Limits = {
  maxCiFixes: number;
  /** Re-runs of red CI that infrastructure caused, per head (`ci.reruns`); absent: `DEFAULT_CI_RERUNS`. */
  ciReruns?: number;
  maxCriticIterations: number;
  /** Rounds people's reviews on the pull request start, apart from the critic's, before escalating. */
  maxHumanRounds: number;
  /** Attempts an effect gets before it goes to the dead letter (not read by the table; the IssueDO applies it). */
  maxEffectAttempts?: number;
  /** The longest interval between a waiting effect's polls (not read by the table; the IssueDO applies it). */
  pollMaxMs?: number;
  /** An effect's first retry in ms, doubling (not read by the table; the IssueDO applies it). */
  effectRetryBaseMs?: number;
  /** Days the issue's history is kept (not read by the table; the IssueDO prunes by it). */
  retentionDays?: number;
  /** Updates from the base (by the forge or by a conflict-resolving session) before escalating. */
  maxUpdates: number;
};

export const DEFAULT_RETENTION_DAYS = 90;

export const DEFAULT_MAX_EFFECT_ATTEMPTS = 25;
/** An effect's first retry, in ms (`effects.retryBaseMs`): the outbox's backoff doubles it up to 5 minutes. */
export const DEFAULT_EFFECT_RETRY_BASE_MS = 500;
export const EFFECT_RETRY_BASE_MIN_MS = 50;
export const EFFECT_RETRY_BASE_MAX_MS = 60_000;

export const DEFAULT_LIMITS: Limits = {
  maxCiFixes: 3,
  maxCriticIterations: 3,
  maxHumanRounds: 5,
  maxUpdates: 3,
};

/** What the lifecycle remembers of an issue besides its state. */
export type IssueContext = {
  state: State;
  /** Sessions started so far: the implement session is 1, each revise or resume adds one. */
  iteration: number;
  ciFixes: number;
  criticRounds: number;
  /** Updates from the base so far (see `maxUpdates`). */
  updates: number;
  blockers: string[];
  sessionId: string | null;
  branch: string | null;
  headSha: string | null;
  /** A pull request was asked for (the first push); its number once the forge has it. */
  prOpened: boolean;
  prNumber: number | null;
  reason: string | null;
  /** The text its jobs carry: the latest a writer queued, never the mirror's current one. */
  brief: Brief | null;
  /** The last session's account of its work, for the pull request's description. */
  summary: string | null;
  /**
   * The job run last dispatched for the issue: only its phase may end the session. `NOT_DISPATCHED` while a
   * continuation waits for its job; null when unknown (contexts stored before this was kept).
   */
  job: JobRun | null;
  /**
   * The issue stopped for a human and its runner keeps the worktree for them until the retention timer
   * ends (then a reap job removes it; the pushed branch stays, so a retry starts from it).
   */
  worktreeKept: boolean;
  /**
   * The head a human last approved a held merge for. An approval is for that commit only: a head that moved
   * since (the forge merging the base in before the merge) waits for an approval of its own.
   */
  approvedHead: string | null;
  /** The vault item the held merge waits on (`awaiting_approval`), once the vault has it. */
  vaultItem: string | null;
  /** Absent: `code` (contexts stored before actions existed). */
  kind?: IssueKind;
  /** An action issue's formula, by name. */
  formula?: string;
  /** The dangerous step an action waits for the vault on (`awaiting_approval`). */
  vaultStep?: string | null;
  /** Rounds people's reviews on the pull request started (see `maxHumanRounds`); absent: none. */
  humanRounds?: number;
  /** Writers' words on the pull request waiting for the session's next round. */
  feedback?: Feedback[];
  /** The change requests the merge last found standing (`awaiting_approval` while they hold it). */
  heldBy?: ReviewHold[];
  /** Reviews whose change requests a writer's `/conveyor merge` overrode. */
  overridden?: number[];
  /** The head's CI re-runs while it waits for CI (src/domain/ci-rerun.ts); cleared on entering `awaiting_ci`. */
  ciRerun?: CiRerun | null;
  /** The issue's latest escalation, and its cause (src/domain/escalation.ts). */
  escalation?: Escalation | null;
  /** The transient causes the issue was already retried for automatically, once each. */
  autoRetried?: EscalationCause[];
  /** Effects given up on while the forge did not answer, waiting for it to answer again. */
  recovery?: Recovery | null;
  /** The triage's proposed next step for the latest escalation, until a writer accepts it. */
  proposal?: Proposal | null;
};

export type JobRun = { id: string; attempt: number };

/** A continuation's session has begun no job yet: no job's phase is its phase. */
export const NOT_DISPATCHED: JobRun = { id: "", attempt: 0 };

export const INITIAL_CONTEXT: IssueContext = {
  state: "new",
  iteration: 0,
  ciFixes: 0,
  criticRounds: 0,
  updates: 0,
  blockers: [],
  sessionId: null,
  branch: null,
  headSha: null,
  prOpened: false,
  prNumber: null,
  reason: null,
  brief: null,
  summary: null,
  job: null,
  worktreeKept: false,
  approvedHead: null,
  vaultItem: null,
};

export type Outcome = { ok: true; next: IssueContext; effects: Effect[] } | { ok: false; reason: string };

type EventOf<T extends EventType> = Extract<LifecycleEvent, { type: T }>;

type Rule<T extends EventType> = {
  /** Every state this rule can lead to; the diagram is drawn from these. */
  to: readonly State[];
  apply: (ctx: IssueContext, event: EventOf<T>, limits: Limits) => Outcome;
};

type StateRules = { [T in EventType]?: Rule<T> };

const accept = (next: IssueContext, effects: Effect[] = []): Outcome => ({ ok: true, next, effects });
const reject = (reason: string): Outcome => ({ ok: false, reason });

/** Why a review (or its failure) of another commit than the issue's head does not count; undefined if it does. */
function staleReview(ctx: IssueContext, e: { headSha?: string }): string | undefined {
  if (e.headSha === undefined || e.headSha === ctx.headSha) return undefined;
  return `stale: the review is of ${e.headSha}, the issue is at ${ctx.headSha ?? "no head"}`;
}
const enter = (ctx: IssueContext, state: State, patch: Partial<IssueContext> = {}): IssueContext => ({
  ...ctx,
  // A new continuation: the job that ran the last session is not this one's.
  ...(state === "revising" && ctx.state !== "revising" && { job: NOT_DISPATCHED }),
  // A new wait for CI: no re-run of it yet.
  ...(state === "awaiting_ci" && ctx.state !== "awaiting_ci" && { ciRerun: null }),
  ...patch,
  state,
});
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

// --- shared rules -------------------------------------------------------------------------------------------

const CYCLE_PREFIX = "dependency cycle: ";

/** Why the gate cannot read the issue's dependencies as a plain list, if it cannot. */
function gateRefusal({ cycle, tooMany }: GateFindings): string | null {
  if (tooMany !== undefined) {
    return `it declares ${tooMany} dependencies and at most ${MAX_DEPENDENCIES} are read; trim the list or split the issue`;
  }
  return cycle && cycle.length > 0 ? `${CYCLE_PREFIX}${cycle.join(" → ")}` : null;
}

/** Dependency gate: blocked while any dependency is open, the issue sits in a cycle or declares too many. */
function gate(
  ctx: IssueContext,
  findings: GateFindings,
  onQueued: Effect[],
  onBlocked: Effect[] = [],
): Outcome {
  const { blockers } = findings;
  const reason = gateRefusal(findings);
  if (reason) {
    if (ctx.state === "blocked" && ctx.reason === reason && sameList(ctx.blockers, blockers)) {
      return reject(`no change: still blocked: ${reason}`);
    }
    return accept(enter(ctx, "blocked", { blockers, reason }), [
      ...onBlocked,
      { kind: "comment", body: `Conveyor cannot start this issue: ${reason}.` },
    ]);
  }
  if (blockers.length > 0) {
    if (ctx.state === "blocked" && sameList(ctx.blockers, blockers)) {
      return reject(`no change: still blocked by ${blockers.join(", ")}`);
    }
    return accept(enter(ctx, "blocked", { blockers, reason: null }), onBlocked);
  }
  if (ctx.state === "queued") return reject("no change: already queued");
  return accept(enter(ctx, "queued", { blockers: [], reason: null }), onQueued);
}

const GATE_TARGETS = ["blocked", "queued"] as const;
const QUEUE: Effect[] = [{ kind: "enqueue_job", job: "implement" }];

/**
 * A writer's triage replaces the text the issue's jobs will carry; any other gate event keeps it. A triage
 * naming a formula makes the issue an action; a writer's triage without one makes it code; a regate without
 * a brief (a dependency closed, reconciliation) keeps its kind.
 */
const briefed = (ctx: IssueContext, e: EventOf<"dependencies" | "triage">): IssueContext => {
  if (e.type !== "triage") return ctx;
  const kind = e.action
    ? { kind: "action" as const, formula: e.action.formula }
    : e.brief && ctx.kind === "action"
      ? { kind: "code" as const, formula: undefined }
      : {};
  return { ...ctx, ...(e.brief && { brief: e.brief }), ...kind };
};

const triageFromNew: Rule<"triage"> = {
  to: GATE_TARGETS,
  apply: (ctx, e) => gate(briefed(ctx, e), e, [...QUEUE], [{ kind: "labels", add: ["blocked"], remove: [] }]),
};

/** Serves both triage and dependencies; typed structurally so it fits either slot of the table. */
type GateRule = {
  to: readonly State[];
  apply: (ctx: IssueContext, e: EventOf<"dependencies" | "triage">) => Outcome;
};

const regateBlocked: GateRule = {
  to: GATE_TARGETS,
  apply: (ctx, e) => gate(briefed(ctx, e), e, [{ kind: "labels", add: [], remove: ["blocked"] }, ...QUEUE]),
};

const regateQueued: GateRule = {
  to: ["blocked"],
  apply: (ctx, e) =>
    gate(ctx, e, [], [{ kind: "cancel_jobs" }, { kind: "labels", add: ["blocked"], remove: [] }]),
};

const escalate = (
  ctx: IssueContext,
  reason: string,
  extra: Effect[] = [],
  labels: LabelRole[] = ["needs_human"],
): Outcome =>
  accept(enter(ctx, "escalated", { reason, worktreeKept: true }), [
    ...extra,
    { kind: "labels", add: labels, remove: ["in_progress"] },
    { kind: "notify_human", reason },
  ]);

const REAP: Effect = { kind: "enqueue_job", job: "reap" };

/** Ended by a human's decision (abandon, a closed issue or pull request): the runner's worktree goes. */
const abandon = (ctx: IssueContext, reason: string, extra: Effect[] = []): Outcome =>
  accept(enter(ctx, "abandoned", { reason, worktreeKept: false }), [
    ...extra,
    { kind: "labels", add: [], remove: ["in_progress", "blocked"] },
    REAP,
  ]);

/** A cap or a BLOCK verdict: abandoned, and a human is told why. The worktree is kept for them. */
const abandonForHuman = (ctx: IssueContext, reason: string): Outcome =>
  accept(enter(ctx, "abandoned", { reason, worktreeKept: true }), [
    { kind: "labels", add: ["needs_human"], remove: ["in_progress"] },
    { kind: "notify_human", reason },
  ]);

const operatorAbandon: Rule<"abandon"> = {
  to: ["abandoned"],
  apply: (ctx, e) => abandon(ctx, `abandoned by ${e.by}`, [{ kind: "cancel_jobs" }]),
};

const closedOnForge = (ctx: IssueContext) =>
  abandon(ctx, "issue closed on the forge", [{ kind: "cancel_jobs" }]);

const closedByHuman: Rule<"issue_closed"> = { to: ["abandoned"], apply: closedOnForge };

/**
 * Closed on the forge while the issue has a pull request: the closing may be that pull request's merge ("Closes
 * #n" in one a human merged, or Conveyor's own merge whose answer is still on the way), so its merged state,
 * read from the forge, decides (check_merged: merge_confirmed, or `issue_closed` unmerged).
 */
const closedWithPull = (state: State): Rule<"issue_closed"> => ({
  to: [state, "abandoned"],
  apply: (ctx, e) =>
    e.unmerged || !ctx.prOpened ? closedOnForge(ctx) : accept(ctx, [{ kind: "check_merged" }]),
});

/**
 * Why a pull request may not speak for the issue, or null when it may: once the issue has a pull request
 * number only that pull request counts; before, only Conveyor's own.
 */
function notTheIssues(ctx: IssueContext, pull: PullRef): string | null {
  if (ctx.prNumber !== null) {
    return pull.number === ctx.prNumber
      ? null
      : `pull request #${pull.number} is not the issue's pull request (#${ctx.prNumber})`;
  }
  return pull.byConveyor ? null : `pull request #${pull.number} was not opened by Conveyor from its branch`;
}

const prClosedByHuman: Rule<"pr_closed"> = {
  to: ["abandoned"],
  apply: (ctx, e) => {
    if (!ctx.prOpened) return reject("no pull request is open for this issue");
    const foreign = notTheIssues(ctx, e);
    if (foreign) return reject(foreign);
    // Closed, it can never merge: a retry opens a new one.
    const unlinked = { ...ctx, prOpened: false, prNumber: null };
    return abandon(unlinked, "pull request closed without merging", [{ kind: "cancel_jobs" }]);
  },
};

/** Records the pull request's number; the state does not change. */
const prOpened = (state: State): Rule<"pr_opened"> => ({
  to: [state],
  apply: (ctx, e) => {
    if (!ctx.prOpened) return reject("no pull request was asked for");
    if (ctx.prNumber === e.number) return reject(`no change: pull request #${e.number} is already recorded`);
    const foreign = notTheIssues(ctx, e);
    if (foreign) return reject(foreign);
    return accept({ ...ctx, prNumber: e.number });
  },
});

const MERGED_EFFECTS: Effect[] = [
  { kind: "cancel_jobs" },
  { kind: "close_issue" },
  { kind: "labels", add: [], remove: ["in_progress", "needs_human", "backlog", "blocked"] },
  REAP,
  { kind: "delete_branch" },
  { kind: "notify_dependents" },
];

const mergeConfirmed: Rule<"merge_confirmed"> = {
  to: ["merged"],
  apply: (ctx, e) => {
    if (!ctx.prOpened) return reject("no pull request is open for this issue");
    const foreign = notTheIssues(ctx, e);
    if (foreign) return reject(foreign);
    const merged = { reason: null, headSha: e.sha ?? ctx.headSha, prNumber: e.number, worktreeKept: false };
    return accept(enter(ctx, "merged", merged), [...MERGED_EFFECTS]);
  },
};

/** A runner's head sha is a claim: when the forge's branch says otherwise, nothing advances on it. */
const headMismatch: Rule<"head_mismatch"> = {
  to: ["escalated"],
  apply: (ctx, e) => {
    if (e.claimed !== ctx.headSha) return reject(`${e.claimed} is not the current head ${ctx.headSha}`);
    // A CI reader outside the object (the webhook route, reconciliation: from D1, which lags) or a CI watch
    // still in flight, once the issue waits for the critic or the merge: the issue's own update from the base
    // may have moved the branch before its `branch_updated` is recorded. Its review and merge check the head.
    if (e.seenBy === "ci" && ctx.state !== "awaiting_ci")
      return reject(
        "read with CI's verdict, but the issue no longer waits for CI: its own gates check the head",
      );
    const actual = e.actual ? `is at ${e.actual}` : "does not exist";
    return escalate(ctx, `${e.branch} ${actual} on the forge, not at the reported head ${e.claimed}`);
  },
};

const budgetExceeded: Rule<"budget_exceeded"> = {
  to: ["escalated"],
  apply: (ctx, e) => escalate(ctx, `budget exceeded: ${e.reason}`, [{ kind: "cancel_jobs" }]),
};

const timeoutRule = (timer: TimerKind, reason: string): Rule<"timeout"> => ({
  to: ["escalated"],
  apply: (ctx, e) => {
    if (e.timer !== timer) return reject(`the ${e.timer} timer does not run in state ${ctx.state}`);
    return escalate(ctx, reason, timer === "session" ? [{ kind: "cancel_jobs" }] : []);
  },
});

/** The retention period of a kept worktree ended: a reap job removes it; nothing else changes. */
const retentionOver = (ctx: IssueContext): Outcome => {
  if (!ctx.worktreeKept) return reject("no worktree is kept for this issue");
  return accept({ ...ctx, worktreeKept: false }, [{ ...REAP, reason: "retention" }]);
};

/** The retention timer of a worktree kept in `state`, beside the state's own timer if it has one. */
const keptWorktreeTimeout = (state: "escalated" | "abandoned", own?: Rule<"timeout">): Rule<"timeout"> => ({
  to: [...(own?.to ?? []), state],
  apply: (ctx, e, limits) => {
    if (e.timer === "retention") return retentionOver(ctx);
    return own ? own.apply(ctx, e, limits) : reject(`the ${e.timer} timer does not run in state ${state}`);
  },
});

/** Whether the issue's retention timer runs: its worktree is kept for a human (see `worktreeKept`). */
export const retainsWorktree = (ctx: IssueContext): boolean =>
  ctx.worktreeKept && (ctx.state === "escalated" || ctx.state === "abandoned");

/** A session's phase signal, shared by the implement (running) and continuation (revising) sessions. */
/**
 * Why a phase is not the current session's, if it is not: it names a job run other than the one last
 * dispatched (a stale job's completion, delivered after a newer session began).
 */
function stalePhase(ctx: IssueContext, e: EventOf<"phase">): string | null {
  if (e.jobId === undefined || ctx.job === null) return null;
  const current = ctx.job;
  if (e.jobId === current.id && (e.attempt === undefined || e.attempt === current.attempt)) return null;
  const from = `job ${e.jobId}${e.attempt === undefined ? "" : ` attempt ${e.attempt}`}`;
  const now =
    current.attempt === NOT_DISPATCHED.attempt
      ? "the current session has no job dispatched yet"
      : `job ${current.id} attempt ${current.attempt} runs the current session`;
  return `stale: the phase of ${from}, but ${now}`;
}

const dispatchedRun = (e: EventOf<"dispatched">): JobRun => ({ id: e.jobId, attempt: e.attempt ?? 1 });

const sessionPhase: Rule<"phase"> = {
  to: ["awaiting_ci", "revising", "escalated"],
  apply: (ctx, e, limits) => {
    const stale = stalePhase(ctx, e);
    if (stale) return reject(stale);
    const session = {
      sessionId: e.sessionId ?? ctx.sessionId,
      branch: e.branch ?? ctx.branch,
      headSha: e.headSha ?? ctx.headSha,
      summary: e.summary ?? ctx.summary,
    };
    // A later push describes itself on the pull request already open.
    const openPr: Effect[] = [{ kind: ctx.prOpened ? "describe_pull_request" : "open_pull_request" }];
    const s = { ...ctx, ...session };
    switch (e.phase) {
      // CI is the server's gate, read from the forge: a session that skips to review waits for CI like any.
      case "awaiting_ci":
      case "awaiting_review":
        if (!session.headSha) return reject(`${e.phase} needs the pushed head sha`);
        // People asked for changes while the session worked: their round follows at once, on the head pushed.
        if (wantsRound(ctx.feedback)) {
          const round = humanRound(enter(s, "awaiting_ci", { prOpened: true, reason: null }), limits);
          return round.ok ? { ...round, effects: [...openPr, ...round.effects] } : round;
        }
        return accept(enter(s, "awaiting_ci", { prOpened: true, reason: null }), [
          ...openPr,
          { kind: "watch_ci" },
        ]);
      case "escalate": {
        // Too vague or too large to implement: labelled for the humans who groom the backlog; no pull request.
        const vague = underspecifiedReason(e.reason);
        if (vague !== null) {
          return escalate(
            s,
            `the session judged the issue underspecified: ${vague}`,
            [],
            ["needs_human", "underspecified"],
          );
        }
        return escalate(s, `session escalated: ${e.reason ?? "no reason given"}`);
      }
      case "done":
        // Conveyor merges; a session has no business declaring the issue done without a pull request.
        return escalate(s, `session reported done without a pull request${e.reason ? `: ${e.reason}` : ""}`);
      case "failed":
        return escalate(s, `session failed: ${e.reason ?? "no reason given"}`);
      case "vault":
        // Only an action's formula has steps for the vault; a code change goes through CI and the critic.
        return escalate(s, "the session asked the vault for a step, but this issue is not an action");
      case "dry_exit":
        return escalate(
          s,
          "the session stopped without saying whether its work is ready (it wrote no PHASE file)",
        );
    }
  },
};

/** A job re-claimed after its lease expired: same session, new runner; recorded, nothing else changes. */
const redispatched = (state: "running" | "revising"): Rule<"dispatched"> => ({
  to: [state],
  apply: (ctx, e) => accept(enter(ctx, state, { job: dispatchedRun(e), reason: null })),
});

/** States whose job may wait for a runner: queued, and a session whose (continuation's) job is not running. */
type Waiting = "queued" | "running" | "revising";

/** No runner starts the issue's job: the issue says so, and keeps its place in the queue. */
const stillWaiting = (ctx: IssueContext, reason: string): Outcome =>
  accept({ ...ctx, reason }, [
    { kind: "comment", body: `Conveyor is still waiting for a runner: ${reason}.` },
  ]);

const leaseUnconfirmed = (state: Waiting): Rule<"lease_unconfirmed"> => ({
  to: [state, "escalated"],
  apply: (ctx, e) => {
    const current = ctx.job?.id ?? "";
    if (state !== "queued" && current !== NOT_DISPATCHED.id && current !== e.jobId) {
      return reject(`stale: job ${e.jobId} is not the issue's current job (${current})`);
    }
    const what = `no runner confirmed taking job ${e.jobId} ${e.count} times in a row`;
    if (e.gaveUp) {
      const reason = `${what} (jobs.maxUnconfirmed): check the runners' logs, then retry`;
      return escalate(ctx, reason, [{ kind: "cancel_jobs" }]);
    }
    const again =
      e.retryInMs === undefined ? "" : `; it is offered again in ${Math.ceil(e.retryInMs / 1_000)} s`;
    return stillWaiting(ctx, `${what}${again}, then with backoff`);
  },
});

/** The `dispatch` timer ran out (and runs again): the issue says it still waits; else the state's own timer. */
const waitingTimeout = (state: Waiting, own?: Rule<"timeout">): Rule<"timeout"> => ({
  to: [state, ...(own?.to ?? [])],
  apply: (ctx, e, limits) => {
    if (e.timer === "dispatch") {
      return stillWaiting(
        ctx,
        "no runner has started its job within timeouts.dispatch: check that a runner serving this project is online and that the daily budget has not paused dispatch",
      );
    }
    return own ? own.apply(ctx, e, limits) : reject(`the ${e.timer} timer does not run in state ${state}`);
  },
});

/** `hint`: what the fresh session is told besides the issue (a triage's hint a writer accepted). */
const retried = (ctx: IssueContext, hint?: string): Outcome =>
  gate(
    // A retry starts a fresh implement session; the pushed branch and its pull request stay, and the
    // worktree is the session's again.
    { ...ctx, ciFixes: 0, criticRounds: 0, humanRounds: 0, sessionId: null, worktreeKept: false },
    { blockers: ctx.blockers },
    [
      { kind: "labels", add: [], remove: ["needs_human"] },
      ...(hint
        ? [{ kind: "enqueue_job" as const, job: "implement" as const, reason: "triage", detail: hint }]
        : QUEUE),
    ],
    [{ kind: "labels", add: ["blocked"], remove: ["needs_human"] }],
  );

const retry: Rule<"retry"> = { to: GATE_TARGETS, apply: (ctx) => retried(ctx) };

/** A session at work: the implement session (running) or a continuation (revising). */
const sessionRules = (state: "running" | "revising"): StateRules => ({
  ...peopleOnThePull(state),
  dispatched: redispatched(state),
  lease_unconfirmed: leaseUnconfirmed(state),
  phase: sessionPhase,
  merge_confirmed: mergeConfirmed,
  pr_closed: prClosedByHuman,
  abandon: operatorAbandon,
  issue_closed: closedWithPull(state),
  timeout: waitingTimeout(state, timeoutRule("session", "session exceeded its wall-clock limit")),
  budget_exceeded: budgetExceeded,
});

/** Replies go through the outbox, like every effect, so that each is posted once; in every state. */
const reply = (state: State): Rule<"reply"> => ({
  to: [state],
  apply: (ctx, e) =>
    accept(ctx, [
      {
        kind: "comment",
        body: e.text,
        thread: e.thread,
        ...(e.to && { to: e.to }),
        ...(e.quote && { quote: e.quote }),
      },
    ]),
});

/**
 * Staying current with the base before the review and before the merge (src/domain/stay-current.ts). The
 * critic's approval is bound to the head sha it reviewed: every new head, a forge's base-only update
 * included, goes through CI and the critic again. Each update counts against `maxUpdates`.
 */
function updateCap(ctx: IssueContext, limits: Limits, what: string): Outcome | null {
  if (ctx.updates < limits.maxUpdates) return null;
  return escalate(
    ctx,
    `${what} after ${ctx.updates} updates from the base (max_updates ${limits.maxUpdates})`,
  );
}

const conflictNames = (files: string[]) =>
  files.length > 0 ? files.map((f) => `\`${f}\``).join(", ") : "the forge did not name the files";

const branchUpdated: Rule<"branch_updated"> = {
  to: ["awaiting_ci", "escalated"],
  apply: (ctx, e, limits) => {
    if (e.headSha === ctx.headSha) return reject(`no change: ${e.headSha} is already the head`);
    return (
      updateCap(ctx, limits, "the pull request is still behind its base") ??
      accept(enter(ctx, "awaiting_ci", { headSha: e.headSha, updates: ctx.updates + 1, reason: null }), [
        { kind: "watch_ci" },
      ])
    );
  },
};

/**
 * What the held merge asks of a human. A head that moved since a human approved it (the forge merged the base
 * in at the merge) says so: that approval was for another commit, and this one needs its own.
 */
function approvalRequest(ctx: IssueContext, why: string): string {
  const asked = `approved by the critic; ${why}`;
  if (!ctx.approvedHead || ctx.approvedHead === ctx.headSha) return asked;
  return `${asked}. The approval given for ${ctx.approvedHead.slice(0, 12)} does not carry over: the branch has moved since (now ${ctx.headSha?.slice(0, 12) ?? "unknown"}); approve the pull request again`;
}

/** The merge waits for a human, in the vault; the human is asked once it holds the item (`vault_requested`). */
const holdForHuman = (ctx: IssueContext, reason: string): Outcome =>
  accept(enter(ctx, "awaiting_approval", { reason, vaultItem: null }), [
    { kind: "labels", add: ["needs_human"], remove: [] },
    { kind: "vault_request", reason },
  ]);

/** A human's approval of the held merge, for the head the issue is at. */
const approveMerge = (ctx: IssueContext, extra: Effect[] = []): Outcome =>
  accept(enter(ctx, "merging", { reason: null, approvedHead: ctx.headSha, vaultItem: null }), [
    { kind: "labels", add: [], remove: ["needs_human"] },
    { kind: "merge" },
    ...extra,
  ]);

const conflict: Rule<"conflict"> = {
  to: ["revising", "escalated"],
  apply: (ctx, e, limits) => {
    const files = conflictNames(e.files);
    if (!ctx.sessionId && !ctx.branch)
      return escalate(ctx, `the pull request conflicts with its base: ${files}`);
    return (
      updateCap(ctx, limits, `the pull request conflicts with its base (${files})`) ??
      accept(
        enter(ctx, "revising", { updates: ctx.updates + 1, iteration: ctx.iteration + 1, reason: null }),
        [
          { kind: "labels", add: ["in_progress"], remove: [] },
          {
            kind: "enqueue_job",
            job: "update",
            reason: "conflict",
            ...(e.files.length > 0 ? { detail: e.files.join("\n") } : {}),
          },
        ],
      )
    );
  },
};

// --- people on the pull request (src/domain/human-review.ts) -------------------------------------------------

/** States where a session works or is about to: words for it wait for its next round. */
const AT_WORK: readonly State[] = ["blocked", "queued", "running", "revising"];

/**
 * A round of people's feedback: the same session revises with their words (all that waited for it), counted
 * apart from the critic's rounds. From an escalation it resumes the session, as a reply does.
 */
function humanRound(ctx: IssueContext, limits: Limits): Outcome {
  const rounds = (ctx.humanRounds ?? 0) + 1;
  if (rounds > limits.maxHumanRounds) {
    return escalate(
      ctx,
      `people on the pull request asked for changes more than ${limits.maxHumanRounds} times (max_human_rounds ${limits.maxHumanRounds})`,
    );
  }
  if (!ctx.sessionId && !ctx.branch) {
    return escalate(ctx, "people on the pull request asked for changes, but no session is known to continue");
  }
  const job: JobKind = ctx.state === "escalated" ? "resume" : "revise";
  return accept(
    enter(ctx, "revising", {
      humanRounds: rounds,
      iteration: ctx.iteration + 1,
      reason: null,
      worktreeKept: false,
      job: NOT_DISPATCHED,
      feedback: [],
      heldBy: [],
    }),
    [
      { kind: "labels", add: ["in_progress"], remove: ["needs_human"] },
      { kind: "enqueue_job", job, reason: "human", detail: feedbackInstructions(ctx.feedback ?? []) },
    ],
  );
}

/** The merge tried again: the forge says whether any change request still holds it. */
const mergeAgain = (ctx: IssueContext): Outcome =>
  accept(enter(ctx, "merging", { reason: null }), [
    { kind: "labels", add: [], remove: ["needs_human"] },
    { kind: "merge" },
  ]);

/** Whether the merge waits for change requests only (not for the vault). */
const heldByPeople = (ctx: IssueContext) => (ctx.heldBy ?? []).length > 0 && !ctx.vaultItem;

/**
 * A person's review or comment on the issue's pull request. Anyone's is recorded (the issue's page shows it);
 * only a writer's is obeyed. While a session works, a writer's words wait for its next round; one that asks
 * for a round (and any in an escalation, which waits for a person's word) stops whatever waited — the critic,
 * the merge, a held merge — and the same session revises with them. A dismissed review no longer holds the
 * merge.
 */
const prReview = (state: State): Rule<"pr_review"> => ({
  to: AT_WORK.includes(state)
    ? [state]
    : [state, "revising", "escalated", ...(state === "awaiting_approval" ? (["merging"] as const) : [])],
  apply: (ctx, e, limits) => {
    if (!ctx.prOpened) return reject("the issue has no pull request yet");
    if (!e.writer) return reject(shownNotObeyed(e.by, e.text));
    if (e.verdict === "approved") return accept(ctx);
    if (e.verdict === "dismissed") {
      return state === "awaiting_approval" && heldByPeople(ctx) && holdsMerge(ctx.heldBy, e.by)
        ? mergeAgain(ctx)
        : accept(ctx);
    }
    const next = { ...ctx, feedback: withFeedback(ctx.feedback, { by: e.by, text: e.text, round: e.round }) };
    if (AT_WORK.includes(state) || (!e.round && state !== "escalated")) return accept(next);
    return humanRound(next, limits);
  },
});

/** A writer's `/conveyor merge`: the reviews it names hold the merge no more; a merge they held goes on. */
const mergeCommand = (state: State): Rule<"merge_command"> => ({
  to: state === "awaiting_approval" ? [state, "merging"] : [state],
  apply: (ctx, e) => {
    if (!ctx.prOpened) return reject("the issue has no pull request yet");
    const next = { ...ctx, overridden: [...new Set([...(ctx.overridden ?? []), ...e.overrides])] };
    return state === "awaiting_approval" && heldByPeople(ctx) ? mergeAgain(next) : accept(next);
  },
});

const peopleOnThePull = (state: State): StateRules => ({
  pr_review: prReview(state),
  merge_command: mergeCommand(state),
});

/** The merge found writers' change requests standing: it waits for them, and says so once per set. */
const mergeHeld: Rule<"merge_held"> = {
  to: ["awaiting_approval"],
  apply: (ctx, e) => {
    if (e.holds.length === 0) return reject("no change request holds the merge");
    const reason = holdReason(e.holds);
    return accept(enter(ctx, "awaiting_approval", { reason, heldBy: e.holds, vaultItem: null }), [
      { kind: "labels", add: ["needs_human"], remove: [] },
      ...(sameHolds(ctx.heldBy, e.holds) ? [] : [{ kind: "notify_human" as const, reason }]),
    ]);
  },
};

// --- the table ----------------------------------------------------------------------------------------------

const TABLE: { [S in State]: StateRules } = {
  new: {
    triage: triageFromNew,
  },
  blocked: {
    ...peopleOnThePull("blocked"),
    triage: regateBlocked,
    dependencies: regateBlocked,
    abandon: operatorAbandon,
    issue_closed: closedByHuman,
  },
  queued: {
    ...peopleOnThePull("queued"),
    triage: regateQueued,
    dependencies: regateQueued,
    dispatched: {
      to: ["running"],
      apply: (ctx, e) =>
        accept(enter(ctx, "running", { iteration: ctx.iteration + 1, job: dispatchedRun(e), reason: null }), [
          { kind: "labels", add: ["in_progress"], remove: ["backlog"] },
        ]),
    },
    lease_unconfirmed: leaseUnconfirmed("queued"),
    timeout: waitingTimeout("queued"),
    abandon: operatorAbandon,
    issue_closed: closedByHuman,
    budget_exceeded: budgetExceeded,
  },
  running: sessionRules("running"),
  awaiting_ci: {
    ...peopleOnThePull("awaiting_ci"),
    pr_opened: prOpened("awaiting_ci"),
    ci: {
      to: ["awaiting_review", "revising", "escalated", "awaiting_ci"],
      apply: (ctx, e, limits) => {
        if (ctx.headSha && e.headSha !== ctx.headSha) {
          return reject(`CI result for ${e.headSha} is not for the current head ${ctx.headSha}`);
        }
        const rerun = rerunDecision(ctx.ciRerun, e, limits.ciReruns ?? DEFAULT_CI_RERUNS);
        if (rerun.kind === "stale") return reject(rerun.reason);
        if (rerun.kind === "rerun") {
          return accept(enter(ctx, "awaiting_ci", { ciRerun: rerun.next, reason: rerun.reason }), [
            { kind: "rerun_ci", targets: rerun.targets, of: rerun.next.fingerprint },
            { kind: "watch_ci", after: rerun.next.fingerprint },
          ]);
        }
        if (e.result === "green") return accept(enter(ctx, "awaiting_review"), [{ kind: "request_review" }]);
        if (ctx.ciFixes >= limits.maxCiFixes) {
          return escalate(
            ctx,
            `CI still red after ${ctx.ciFixes} fix attempts (max_ci_fixes ${limits.maxCiFixes})`,
          );
        }
        const refused = e.rerunRefused && { reason: e.rerunRefused };
        const fix = { ciFixes: ctx.ciFixes + 1, iteration: ctx.iteration + 1, ...refused };
        return accept(enter(ctx, "revising", fix), [
          { kind: "enqueue_job", job: "revise", reason: "ci", ...(e.excerpt ? { detail: e.excerpt } : {}) },
        ]);
      },
    },
    head_mismatch: headMismatch,
    merge_confirmed: mergeConfirmed,
    pr_closed: prClosedByHuman,
    abandon: operatorAbandon,
    issue_closed: closedWithPull("awaiting_ci"),
    timeout: timeoutRule("ci", "CI did not report in time"),
    budget_exceeded: budgetExceeded,
  },
  awaiting_review: {
    ...peopleOnThePull("awaiting_review"),
    pr_opened: prOpened("awaiting_review"),
    review: {
      to: ["merging", "awaiting_approval", "revising", "abandoned"],
      apply: (ctx, e, limits) => {
        if (staleReview(ctx, e)) return reject(staleReview(ctx, e) as string);
        switch (e.verdict) {
          case "APPROVE":
            if (e.needsHumanApproval) return holdForHuman(ctx, e.needsHumanApproval);
            return accept(enter(ctx, "merging", { reason: null }), [{ kind: "merge" }]);
          case "REQUEST_CHANGES": {
            const rounds = ctx.criticRounds + 1;
            if (rounds >= limits.maxCriticIterations) {
              return abandonForHuman(
                { ...ctx, criticRounds: rounds },
                `critic requested changes ${rounds} times (max_critic_iterations ${limits.maxCriticIterations})`,
              );
            }
            return accept(enter(ctx, "revising", { criticRounds: rounds, iteration: ctx.iteration + 1 }), [
              { kind: "enqueue_job", job: "revise", reason: "review", detail: e.summary },
            ]);
          }
          case "BLOCK":
            return abandonForHuman(ctx, `critic blocked the change: ${e.summary}`);
        }
      },
    },
    review_failed: {
      to: ["escalated"],
      apply: (ctx, e) => {
        const stale = staleReview(ctx, e);
        return stale ? reject(stale) : escalate(ctx, `the critic failed: ${e.reason}`);
      },
    },
    branch_updated: branchUpdated,
    conflict,
    head_mismatch: headMismatch,
    merge_confirmed: mergeConfirmed,
    pr_closed: prClosedByHuman,
    abandon: operatorAbandon,
    issue_closed: closedWithPull("awaiting_review"),
    timeout: timeoutRule("review", "the review did not arrive in time"),
    budget_exceeded: budgetExceeded,
  },
  revising: { pr_opened: prOpened("revising"), ...sessionRules("revising") },
  awaiting_approval: {
    ...peopleOnThePull("awaiting_approval"),
    pr_opened: prOpened("awaiting_approval"),
    human_approval: {
      to: ["awaiting_approval", "merging"],
      apply: (ctx, e) => {
        // A late or replayed approval of an earlier head does not approve this one.
        if (e.headSha && ctx.headSha && e.headSha !== ctx.headSha) {
          return reject(`the approval is for ${e.headSha}, not the current head ${ctx.headSha}`);
        }
        // The vault decides, so that every way of approving leaves one audit trail and the first decision
        // (an approval, a rejection, the expiry) wins; its `vault_decision` moves the issue on.
        if (ctx.vaultItem) return accept(ctx, [{ kind: "vault_approve", itemId: ctx.vaultItem, by: e.by }]);
        // Held before the vault knew of it (its request not delivered yet, or from an earlier version).
        return approveMerge(ctx);
      },
    },
    vault_requested: {
      to: ["awaiting_approval"],
      apply: (ctx, e) => {
        if (ctx.vaultItem === e.itemId) return reject(`no change: the merge already waits on ${e.itemId}`);
        return accept({ ...ctx, vaultItem: e.itemId }, [
          {
            kind: "notify_human",
            reason: `${approvalRequest(ctx, ctx.reason ?? "it needs a human's approval")} (vault item ${e.itemId})`,
          },
        ]);
      },
    },
    vault_decision: {
      to: ["merging", "abandoned"],
      apply: (ctx, e) => {
        if (ctx.vaultItem !== e.itemId) {
          return reject(
            `vault item ${e.itemId} is not the one the merge waits on (${ctx.vaultItem ?? "none yet"})`,
          );
        }
        // Acted on: the item fires now, with the merge it approved.
        if (e.decision === "approved") return approveMerge(ctx, [{ kind: "vault_fired", itemId: e.itemId }]);
        const why =
          e.decision === "rejected"
            ? `rejected by ${e.by}${e.reason ? `: ${e.reason}` : ""}`
            : "not approved before its vault item expired";
        return abandon({ ...ctx, vaultItem: null }, `the merge was ${why}`, [
          {
            kind: "comment",
            body: `The merge of this change (vault item ${e.itemId}) was ${why}. Conveyor abandons the issue; comment \`/conveyor retry\` to start it again.`,
          },
          { kind: "labels", add: [], remove: ["needs_human"] },
        ]);
      },
    },
    merge_confirmed: mergeConfirmed,
    pr_closed: prClosedByHuman,
    abandon: operatorAbandon,
    issue_closed: closedWithPull("awaiting_approval"),
    // No timer of its own: the vault item's expiry (vault_decision `expired`) is the held merge's way out.
  },
  merging: {
    ...peopleOnThePull("merging"),
    merge_held: mergeHeld,
    pr_opened: prOpened("merging"),
    branch_updated: branchUpdated,
    conflict,
    merge_confirmed: mergeConfirmed,
    merge_failed: {
      to: ["escalated"],
      apply: (ctx, e) => escalate(ctx, `merge failed: ${e.reason}`),
    },
    merge_needs_approval: { to: ["awaiting_approval"], apply: (ctx, e) => holdForHuman(ctx, e.reason) },
    review: { to: [], apply: () => reject("already merging: the approval was acted on") },
    // The merge's answer is overdue: ask the forge (check_merge answers merge_confirmed or merge_failed).
    timeout: {
      to: ["merging"],
      apply: (ctx, e) =>
        e.timer === "merge"
          ? accept(ctx, [{ kind: "check_merge" }])
          : reject(`the ${e.timer} timer does not run in state ${ctx.state}`),
    },
    pr_closed: prClosedByHuman,
    abandon: operatorAbandon,
    // The merge itself closes the issue, and that webhook can beat the merge's answer.
    issue_closed: closedWithPull("merging"),
  },
  escalated: {
    ...peopleOnThePull("escalated"),
    pr_opened: prOpened("escalated"),
    human_reply: {
      to: ["revising"],
      apply: (ctx, e) => {
        if (!ctx.sessionId && !ctx.branch) return reject("no session to resume: use retry");
        return accept(
          enter(ctx, "revising", { iteration: ctx.iteration + 1, reason: null, worktreeKept: false }),
          [
            { kind: "labels", add: ["in_progress"], remove: ["needs_human"] },
            { kind: "enqueue_job", job: "resume", reason: "human", detail: `${e.author}: ${e.text}` },
          ],
        );
      },
    },
    merge_confirmed: mergeConfirmed,
    pr_closed: prClosedByHuman,
    retry,
    abandon: operatorAbandon,
    issue_closed: closedWithPull("escalated"),
    timeout: keptWorktreeTimeout("escalated", {
      to: ["escalated", "abandoned"],
      apply: (ctx, e) => {
        const reason = ctx.reason ?? "no reason recorded";
        if (e.timer === "renotify") return accept(ctx, [{ kind: "notify_human", reason, reminder: true }]);
        if (e.timer !== "escalation")
          return reject(`the ${e.timer} timer does not run in state ${ctx.state}`);
        // Said on the issue before it is let go: an expiry is never silent. The worktree stays for the rest
        // of its retention period.
        return accept(enter(ctx, "abandoned", { reason: "no human answered within the escalation window" }), [
          {
            kind: "comment",
            body: `No human answered this escalation in time (${reason}). Conveyor abandons the issue; comment \`/conveyor retry\` to start it again.`,
          },
          { kind: "labels", add: [], remove: ["in_progress", "blocked"] },
        ]);
      },
    }),
  },
  merged: {},
  done: {},
  abandoned: {
    retry,
    timeout: keptWorktreeTimeout("abandoned"),
  },
};

// --- action issues -------------------------------------------------------------------------------------------

/**
 * An action's job resumes its session in `running`: the job that ran the last session is not this one's.
 * `approved`: the step the vault approved and its item, carried by this job alone (a later job, a retry's, does
 * not inherit it): the runner runs that dangerous step's command for this job and no other, and only as the
 * item approved it.
 */
const resumeAction = (
  ctx: IssueContext,
  detail: string,
  approved?: { step: string; item: string },
): Outcome =>
  accept(
    enter(ctx, "running", {
      iteration: ctx.iteration + 1,
      reason: null,
      worktreeKept: false,
      job: NOT_DISPATCHED,
      vaultStep: null,
      vaultItem: null,
    }),
    [
      { kind: "labels", add: ["in_progress"], remove: ["needs_human"] },
      approved
        ? { kind: "enqueue_job", job: "resume", reason: "vault", detail, approved }
        : { kind: "enqueue_job", job: "resume", reason: "human", detail },
    ],
  );

/** An action that cannot go on: said on the issue with why, and its worktree goes. */
const actionStops = (ctx: IssueContext, why: string): Outcome =>
  abandon({ ...ctx, vaultStep: null, vaultItem: null }, `the action stops: ${why}`, [
    { kind: "comment", body: `The action stops: ${why}.` },
    { kind: "labels", add: [], remove: ["needs_human"] },
  ]);

const actionPhase: Rule<"phase"> = {
  to: ["done", "awaiting_approval", "escalated"],
  apply: (ctx, e, limits) => {
    const stale = stalePhase(ctx, e);
    if (stale) return reject(stale);
    const s = { ...ctx, sessionId: e.sessionId ?? ctx.sessionId, summary: e.summary ?? ctx.summary };
    if (e.refused) return escalate(s, e.refused);
    switch (e.phase) {
      case "done": {
        const summary = e.summary ?? e.reason;
        return accept(enter(s, "done", { reason: null, worktreeKept: false }), [
          summary
            ? {
                kind: "comment",
                body: "**The action is done.**",
                quote: { by: "Its session", text: summary },
              }
            : { kind: "comment", body: "**The action is done.** It finished its formula." },
          { kind: "close_issue" },
          { kind: "labels", add: [], remove: ["in_progress", "needs_human", "backlog", "blocked"] },
          REAP,
          { kind: "notify_dependents" },
        ]);
      }
      case "vault":
        if (!e.step) return escalate(s, "the session asked the vault without naming the step (a Step: line)");
        return accept(
          enter(s, "awaiting_approval", {
            vaultStep: e.step,
            vaultItem: null,
            reason: `step ${e.step} waits for the vault's decision`,
          }),
          [
            { kind: "labels", add: [], remove: ["in_progress"] },
            { kind: "vault_step", step: e.step },
          ],
        );
      case "awaiting_ci":
      case "awaiting_review":
        return escalate(s, `an action has no pull request, but its session ended with ${e.phase}`);
      default:
        // escalate, failed, dry_exit: as a code session's, for a human to answer or retry.
        return sessionPhase.apply(s, e, limits);
    }
  },
};

const vaultDecision: Rule<"vault_decision"> = {
  to: ["running", "abandoned"],
  apply: (ctx, e) => {
    const step = ctx.vaultStep;
    if (!step) return reject("no step is waiting for the vault");
    // Before `vault_requested` the decision came early: parked until it is (src/domain/early-events.ts).
    if (ctx.vaultItem !== e.itemId) {
      return reject(
        `vault item ${e.itemId} is not the one step ${step} waits on (${ctx.vaultItem ?? "none yet"})`,
      );
    }
    const by = e.by;
    switch (e.decision) {
      case "approved":
        return resumeAction(
          ctx,
          `The vault approved step ${step} (item ${e.itemId}, by ${by}${e.reason ? `: ${e.reason}` : ""}). Run it now with run_step.`,
          { step, item: e.itemId },
        );
      case "rejected":
        return actionStops(
          ctx,
          `the vault rejected step ${step} (item ${e.itemId}, by ${by}${e.reason ? `: ${e.reason}` : ""})`,
        );
      case "expired":
        return actionStops(ctx, `nobody decided on step ${step} before its vault item ${e.itemId} expired`);
    }
  },
};

/**
 * Where an action's lifecycle differs from a code issue's; every other (state, event) follows the code table.
 * An action never reaches a pull request's states: its session ends done, at the vault, or with a human.
 */
const ACTION_RULES: { [S in State]?: StateRules } = {
  running: {
    phase: actionPhase,
  },
  awaiting_approval: {
    vault_requested: {
      to: ["awaiting_approval"],
      apply: (ctx, e) => {
        if (!ctx.vaultStep) return reject("no step is waiting for the vault");
        if (ctx.vaultItem === e.itemId)
          return reject(`no change: step ${ctx.vaultStep} already waits on ${e.itemId}`);
        return accept({ ...ctx, vaultItem: e.itemId }, [
          { kind: "labels", add: ["needs_human"], remove: [] },
          {
            kind: "notify_human",
            reason: `step ${ctx.vaultStep} of formula ${ctx.formula ?? "?"} is dangerous and waits for the vault (item ${e.itemId})`,
          },
        ]);
      },
    },
    vault_decision: vaultDecision,
    // The operator's approval of the issue (`conveyor approve <n>`) is the vault's to decide, as a held merge's.
    human_approval: {
      to: ["awaiting_approval"],
      apply: (ctx, e) =>
        ctx.vaultItem
          ? accept(ctx, [{ kind: "vault_approve", itemId: ctx.vaultItem, by: e.by }])
          : reject("the vault does not hold the step yet: approve its item once it does"),
    },
  },
  escalated: {
    human_reply: {
      to: ["running"],
      apply: (ctx, e) => {
        if (!ctx.sessionId) return reject("no session to resume: use retry");
        return resumeAction(ctx, `${e.author}: ${e.text}`);
      },
    },
    // An idle action session ends: nobody answered within `idle` (4 h); the retention timer as for code.
    timeout: keptWorktreeTimeout("escalated", {
      to: ["abandoned"],
      apply: (ctx, e) =>
        e.timer === "idle"
          ? actionStops(ctx, `nobody answered within the idle time (${ctx.reason ?? "no reason recorded"})`)
          : reject(`the ${e.timer} timer does not run in state ${ctx.state} of an action`),
    }),
  },
};

const DEFAULT_REASON: { [S in State]: string } = {
  new: "the issue is not in Conveyor's lifecycle; it enters through the backlog",
  blocked: "the issue is waiting for its dependencies",
  queued: "the issue is waiting for a runner",
  running: "a session is running",
  awaiting_ci: "the issue is waiting for CI",
  awaiting_review: "the issue is waiting for the critic",
  revising: "a session is revising the change",
  awaiting_approval: "the merge is waiting for a human approval",
  merging: "the pull request is being merged",
  escalated: "the issue is waiting for a human",
  merged: "the issue is merged",
  abandoned: "the issue is abandoned",
  done: "the action is done",
};

/** Applies one event. Never throws for a well-typed event: an inapplicable one is a rejection with a reason. */
export function transition(
  ctx: IssueContext,
  event: LifecycleEvent,
  limits: Limits = DEFAULT_LIMITS,
): Outcome {
  const rule = ruleFor(ctx.state, event.type, ctx.kind) as Rule<typeof event.type> | undefined;
  if (!rule) return reject(`${event.type} does not apply: ${DEFAULT_REASON[ctx.state]}`);
  const outcome = (rule.apply as (c: IssueContext, e: LifecycleEvent, l: Limits) => Outcome)(
    ctx,
    event,
    limits,
  );
  return escalations(ctx, event, withdrawn(ctx, event, withWaitingFeedback(outcome)));
}

/**
 * A continuation queued with writers' words waiting for it (a CI fix, the critic's changes, a reply) carries
 * them too: the next round is theirs as well.
 */
function withWaitingFeedback(outcome: Outcome): Outcome {
  const waiting = outcome.ok ? (outcome.next.feedback ?? []) : [];
  if (!outcome.ok || waiting.length === 0) return outcome;
  const continues = (e: Effect) => e.kind === "enqueue_job" && (e.job === "revise" || e.job === "resume");
  if (!outcome.effects.some(continues)) return outcome;
  const effects = outcome.effects.map((e) =>
    e.kind === "enqueue_job" && continues(e) ? { ...e, detail: withPending(e.detail, waiting) } : e,
  );
  return { ok: true, next: { ...outcome.next, feedback: [] }, effects };
}

/**
 * An outcome that escalates the issue (its humans are notified, in escalated or abandoned) records the
 * escalation and its cause, and asks for its triage. A runner lost or CI's infrastructure, causes known to be transient, is retried at
 * once instead, if the issue was not retried for it before (src/domain/escalation.ts); an unreachable forge's
 * retry waits for it to answer (`effect_failed`).
 */
function escalations(ctx: IssueContext, event: LifecycleEvent, outcome: Outcome): Outcome {
  if (!outcome.ok) return outcome;
  const { next, effects } = outcome;
  const notified = effects.some((e) => e.kind === "notify_human" && !e.reminder);
  if (!notified || (next.state !== "escalated" && next.state !== "abandoned")) return outcome;
  const cause = escalationCause(event);
  const done = ctx.autoRetried ?? [];
  const now = cause === "runner_lost" || cause === "ci_infrastructure";
  if (now && next.state === "escalated" && retriesAutomatically(cause, done)) {
    const reason = next.reason ?? cause;
    const again = retried({ ...next, autoRetried: [...done, cause] });
    if (again.ok) {
      return accept({ ...again.next, reason: `retried automatically after: ${reason}` }, [
        ...effects.filter((e) => e.kind === "cancel_jobs"),
        { kind: "labels", add: [], remove: ["in_progress"] },
        { kind: "comment", body: automaticRetryNotice(cause, reason) },
        ...again.effects,
      ]);
    }
  }
  const escalation = { n: (ctx.escalation?.n ?? 0) + 1, cause, from: ctx.state };
  return {
    ...outcome,
    next: { ...next, escalation, proposal: null },
    effects: [...effects, { kind: "request_triage", escalation: escalation.n }],
  };
}

/**
 * The vault item an edge stops waiting on, other than by its own decision (the issue left awaiting_approval,
 * or another item replaced it), is withdrawn: approving it would do nothing, so nobody may.
 */
function withdrawn(ctx: IssueContext, event: LifecycleEvent, outcome: Outcome): Outcome {
  const item = ctx.vaultItem;
  if (!outcome.ok || !item || ctx.state !== "awaiting_approval") return outcome;
  const { next } = outcome;
  if (next.state === "awaiting_approval" && next.vaultItem === item) return outcome;
  if (event.type === "vault_decision" && event.itemId === item) return outcome;
  const reason =
    next.state === "awaiting_approval"
      ? `the issue waits on ${next.vaultItem ?? "another item"} instead`
      : `the issue is ${next.state} (${event.type}): it no longer waits for the vault`;
  return { ...outcome, effects: [...outcome.effects, { kind: "vault_withdraw", itemId: item, reason }] };
}

/** The vault's answer to a request made in a state the issue has since left: the item is withdrawn at once. */
const lateVaultItem = (state: State): Rule<"vault_requested"> => ({
  to: [state],
  apply: (ctx, e) =>
    accept(ctx, [
      {
        kind: "vault_withdraw",
        itemId: e.itemId,
        reason: `the issue is ${state}: it no longer waits for the vault`,
      },
    ]),
});

/**
 * The edges the table can take, for the generated diagram and its staleness test; `kind: "action"` gives the
 * edges only an action issue takes, where its rules differ from a code issue's.
 */
export function edges(kind: IssueKind = "code"): { from: State; event: EventType; to: State }[] {
  return STATES.flatMap((from) =>
    EVENT_TYPES.flatMap((event) =>
      kind === "action" && !ACTION_RULES[from]?.[event]
        ? []
        : (ruleFor(from, event, kind)?.to ?? []).map((to) => ({ from, event, to })),
    ),
  );
}

/** An issue already waiting for a human, or finished: a dead letter escalates it no further. */
const stopped = (state: State) => state === "escalated" || TERMINAL_STATES.includes(state);

/** The dead letter escalates the issue where it is at work: a human must look. */
const gaveUp = (ctx: IssueContext, reason: string): Outcome =>
  escalate(ctx, reason, holdsSlot(ctx.state) ? [{ kind: "cancel_jobs" }] : []);

/**
 * A dead-lettered effect: a human must look. An issue already waiting for one (or finished) records it with
 * the refusal as its reason; the failed effect may be the very comment that would have told them. One given
 * up on while the forge did not answer waits for it to answer again instead, where the issue may still be
 * retried for that automatically (once; later ones of the same outage join it), and the issue goes on meanwhile.
 */
const effectFailed = (state: State): Rule<"effect_failed"> => ({
  to: stopped(state) ? [state] : [state, "escalated"],
  apply: (ctx, e) => {
    const waiting = e.transient && e.deadLetter !== undefined ? awaitForge(ctx, e, e.deadLetter) : null;
    if (waiting) return waiting;
    if (stopped(state)) return reject(`${e.effect} failed for good: ${e.error}`);
    return gaveUp(ctx, `Conveyor gave up on an action (${e.effect}): ${e.error}`);
  },
});

function awaitForge(ctx: IssueContext, e: EventOf<"effect_failed">, deadLetter: number): Outcome | null {
  const { recovery } = ctx;
  if (recovery) {
    const deadLetters = [...recovery.deadLetters, deadLetter].slice(0, MAX_RECOVERED_EFFECTS);
    return accept({ ...ctx, recovery: { ...recovery, deadLetters } });
  }
  if (!retriesAutomatically("forge_unreachable", ctx.autoRetried ?? [])) return null;
  const error = e.error.slice(0, 300);
  return accept({ ...ctx, recovery: { deadLetters: [deadLetter], effect: e.effect, error } }, [
    { kind: "probe_forge" },
  ]);
}

/**
 * The forge answers again: the effects given up on are sent again, once, and the issue goes on. It did not
 * within the wait: they stay dead letters, and the issue escalates as they would have had it at once.
 */
const forgeRecovered = (state: State): Rule<"forge_recovered"> => ({
  to: stopped(state) ? [state] : [state, "escalated"],
  apply: (ctx, e) => {
    const { recovery } = ctx;
    if (!recovery) return reject("no effect waits for the forge to answer again");
    const settled: IssueContext = {
      ...ctx,
      recovery: null,
      autoRetried: [...(ctx.autoRetried ?? []), "forge_unreachable"],
    };
    if (e.answered) {
      return accept(settled, [
        { kind: "resend_dead_letters", ids: recovery.deadLetters },
        { kind: "comment", body: recoveryNotice(recovery) },
      ]);
    }
    if (stopped(state)) return accept(settled);
    const hours = Math.round(FORGE_RECOVERY_WAIT_MS / 3_600_000);
    return gaveUp(
      settled,
      `Conveyor gave up on an action (${recovery.effect}): ${recovery.error}; the forge did not answer again within ${hours} h`,
    );
  },
});

const waitsOnTriage = (state: State) => state === "escalated" || state === "abandoned";

/** The triage's answer to the escalation the issue is in: kept for a writer to accept, and posted. */
const triageProposal = (state: State): Rule<"triage_proposal"> => ({
  to: waitsOnTriage(state) ? [state] : [],
  apply: (ctx, e) => {
    const stale = staleProposal(ctx, e.proposal.escalation);
    if (stale) return reject(stale);
    const { body, quote } = proposalComment(e.proposal);
    return accept({ ...ctx, proposal: e.proposal }, [{ kind: "comment", body, quote }]);
  },
});

/** A writer's `/conveyor accept`: the proposed step is carried out, once. */
const acceptProposal = (state: State): Rule<"accept"> => ({
  to:
    state === "escalated"
      ? [...GATE_TARGETS, "abandoned", "escalated"]
      : waitsOnTriage(state)
        ? [...GATE_TARGETS, "abandoned"]
        : [],
  apply: (ctx, e) => {
    const refusal = acceptRefusal(ctx);
    if (refusal || !ctx.proposal) return reject(refusal ?? "no triage proposal waits to be accepted");
    const { step, agent, runId } = ctx.proposal;
    const taken: IssueContext = { ...ctx, proposal: null };
    switch (step.kind) {
      case "retry":
        return retried(taken, step.hint);
      case "abandon":
        if (state === "abandoned") return reject("the issue is abandoned already");
        return abandon(taken, `abandoned by ${e.by}, as the triage proposed`, [{ kind: "cancel_jobs" }]);
      case "clarify": {
        const then =
          state === "escalated"
            ? "a writer's reply resumes the session"
            : "once it is answered, comment `/conveyor retry`";
        return accept(taken, [
          { kind: "labels", add: ["underspecified"], remove: [] },
          {
            kind: "comment",
            body: `${e.by} accepted the triage's proposal: this issue needs an answer from its author to the question below; ${then}.`,
            quote: { by: `The agent \`${agent}\` (run \`${runId}\`)`, text: step.question },
          },
        ]);
      }
      case "split":
        return abandon(
          taken,
          `split into ${step.parts.length} issues, as the triage proposed (accepted by ${e.by})`,
          [
            { kind: "cancel_jobs" },
            { kind: "split_issue", parts: step.parts, by: e.by },
            { kind: "close_issue" },
          ],
        );
    }
  },
});

const ruleFor = (state: State, event: EventType, kind: IssueKind = "code") => {
  if (event === "reply") return reply(state);
  if (event === "effect_failed") return effectFailed(state);
  if (event === "forge_recovered") return forgeRecovered(state);
  if (event === "triage_proposal") return triageProposal(state);
  if (event === "accept") return acceptProposal(state);
  if (event === "vault_requested" && state !== "awaiting_approval") return lateVaultItem(state);
  const action = kind === "action" ? ACTION_RULES[state]?.[event] : undefined;
  return action ?? TABLE[state][event];
};

const HOUR = 60 * 60_000;

/** The phase protocol's waits where it names one (review 3 h, re-notify 6 h, escalation 24 h). */
export const DEFAULT_TIMEOUTS_MS: { [K in TimerKind]: number } = {
  session: 2 * HOUR,
  ci: HOUR,
  review: 3 * HOUR,
  merge: HOUR / 2,
  escalation: 24 * HOUR,
  renotify: 6 * HOUR,
  retention: 7 * 24 * HOUR,
  idle: 4 * HOUR,
  dispatch: 24 * HOUR,
};

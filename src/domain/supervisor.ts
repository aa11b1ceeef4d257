/**
 * The supervisor's checks (issue 18): from a snapshot of a project's factory — its runners' health, its live
 * issues with the time they have spent in their state, its jobs, dead-lettered effects, today's spend and its
 * blocked issues' dependencies — the findings a human (or a safe remedy) must attend to, each with a priority
 * from P0 (memory crisis) to P4 (housekeeping). Pure: the ProjectDO gathers the snapshot and applies the
 * remedies (durable-objects/project/supervisor/supervisor.ts).
 *
 * A finding's key names its cause, not the moment it was seen: the same cause found on the next run has the
 * same key, so it is reported once, and it resolves when a run no longer finds it (`reconcileFindings`).
 */
import { type FlakyCheck, flakyFindings } from "./flaky-checks.ts";
import type { State } from "./lifecycle.ts";
import type { SuspectRotation } from "./runner-tokens.ts";
import {
  budgetFindings,
  deadLetterFindings,
  dependencyFindings,
  issueFindings,
  jobFindings,
  leftoverFindings,
  runnerFindings,
} from "./supervisor-checks.ts";
import type { Timeouts } from "./timers.ts";

export const PRIORITIES = ["P0", "P1", "P2", "P3", "P4"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Checks about a runner rather than a project: the operator's business (src/domain/alerts.ts). */
export const RUNNER_CHECKS = [
  "memory",
  "runner_offline",
  "token_rotated",
  "disk",
  "load",
  "worktrees",
] as const;

export const CHECKS = [
  ...RUNNER_CHECKS,
  "leftover_worktree",
  "issue_stuck",
  "escalation_silent",
  "issue_waiting",
  "approval_waiting",
  "lease_overdue",
  "job_waiting",
  "dead_letter",
  "budget",
  "dependency",
  "flaky_check",
] as const;
export type Check = (typeof CHECKS)[number];

/** What the supervisor may do about a finding by itself: nothing in it can lose work. */
export type Remedy =
  /**
   * The issue's timers are overdue: its Durable Object re-arms its alarm and delivers what is due (which fires
   * the overdue timer: an escalation's reminder re-notifies its humans).
   */
  | { kind: "wake_issue"; number: number }
  /**
   * A finished issue's worktree was never reaped: a reap job (one per session, however often it is found) goes
   * to the runner that last held it. The pushed branch stays.
   */
  | { kind: "reap"; number: number; sessionAt: number };

export type Finding = {
  key: string;
  priority: Priority;
  check: Check;
  /** What it is about: `runner build-a`, `#12`, `budget`. */
  subject: string;
  /** One line for a human: what is wrong and what to do. It may go on the project's (possibly public) forge. */
  summary: string;
  /**
   * What only the operator sees (the dashboard, the API), never a forge issue: a runner's host figures
   * (memory, disk, load, worktrees) and addresses.
   */
  detail?: string;
  remedy?: Remedy;
};

/** Thresholds, from the project's `supervisor` settings (src/projects/config.ts). */
export type SupervisorLimits = {
  /** A runner not seen this long is offline. */
  runnerSilentMs: number;
  /** Available memory below this share of the total: P0 (below `memoryLowRatio`: P2). */
  memoryCrisisRatio: number;
  memoryLowRatio: number;
  /** Free disk below this share of the file system: P1 (below `diskLowRatio`: P3). */
  diskCriticalRatio: number;
  diskLowRatio: number;
  /** One-minute load per CPU above this: P3. */
  loadPerCpu: number;
  /** Worktrees on one runner above this: P4. */
  maxWorktrees: number;
  /** An issue past its state's own time limit by more than this is stuck (its timer did not move it). */
  stuckGraceMs: number;
  /** An issue or job waiting for a runner longer than this: P2. */
  queuedMs: number;
  /** A merge waiting for a human's approval longer than this: P3. */
  approvalWaitMs: number;
  /** A dead letter of a finished issue is reported this long after it happened. */
  deadLetterWindowMs: number;
  /** Today's spend at this share of the daily cap: P3 (at the cap: P2). */
  budgetWarnRatio: number;
};

export type RunnerHealth = {
  id: string;
  name: string;
  lastSeenAt: number;
  disk: { freeBytes: number; totalBytes: number } | null;
  memory: { availableBytes: number; totalBytes: number } | null;
  load: { load1: number; cpus: number } | null;
  /** When memory and load were recorded: a sample older than the runner's silence limit is not judged. */
  hostAt: number | null;
  worktrees: number | null;
  /** Its token's last rotation from an address it had not been seen at, and when its replaced token was used. */
  rotation: (SuspectRotation & { supersededSeenAt: number | null }) | null;
};

export type IssueHealth = {
  number: number;
  state: State;
  /** When, and at which of its history's seq, the issue entered its current state. */
  enteredAt: number;
  enteredSeq: number;
  /** When its last applied event was (an escalation's reminder is one). */
  lastEventAt: number;
};

export type JobHealth = {
  id: string;
  number: number;
  kind: string;
  status: "queued" | "leased" | "done" | "failed" | "cancelled";
  runnerId: string | null;
  leaseExpiresAt: number | null;
  createdAt: number;
};

/** An `effect_failed` entry of an issue's history: an effect Conveyor gave up on. */
export type DeadLetterEntry = { number: number; seq: number; at: number; reason: string };

/**
 * A finished issue that had a session (its worktree on a runner): when it ended, when its last session was,
 * and when a reap job for it was last queued or done (null: never).
 */
export type FinishedWorktree = {
  number: number;
  state: "merged" | "abandoned";
  endedAt: number;
  sessionAt: number;
  reapAt: number | null;
};

/** A blocked issue's dependency and that dependency's state (null: Conveyor never saw it). */
export type DependencyEdge = { dependent: number; dependency: number; state: State | null };

export type Snapshot = {
  now: number;
  runners: readonly RunnerHealth[];
  /** The project's live issues (not merged or abandoned). */
  issues: readonly IssueHealth[];
  jobs: readonly JobHealth[];
  deadLetters: readonly DeadLetterEntry[];
  dependencies: readonly DependencyEdge[];
  finished: readonly FinishedWorktree[];
  /** CI checks that passed on a re-run lately (src/domain/flaky-checks.ts). */
  flakyChecks: readonly FlakyCheck[];
  spentTodayUsd: number;
  dailyCapUsd: number;
  /** The UTC day the spend is of: the budget's findings are per day. */
  day: string;
  timeouts: Timeouts;
  limits: SupervisorLimits;
};

/** Every finding in the snapshot, most urgent first; one per key. */
export function runChecks(snapshot: Snapshot): Finding[] {
  const found = [
    ...snapshot.runners.flatMap((runner) => runnerFindings(runner, snapshot)),
    ...snapshot.issues.flatMap((issue) => issueFindings(issue, snapshot)),
    ...jobFindings(snapshot),
    ...deadLetterFindings(snapshot),
    ...budgetFindings(snapshot),
    ...dependencyFindings(snapshot),
    ...leftoverFindings(snapshot),
    ...flakyFindings(snapshot.flakyChecks),
  ];
  const byKey = new Map<string, Finding>();
  for (const finding of found) if (!byKey.has(finding.key)) byKey.set(finding.key, finding);
  return [...byKey.values()].sort(
    (a, b) => PRIORITIES.indexOf(a.priority) - PRIORITIES.indexOf(b.priority) || a.key.localeCompare(b.key),
  );
}

/** A finding as the supervisor keeps it: since when it stands, and the forge issue that reports it. */
export type OpenFinding = Finding & { openedAt: number };

export type FindingChanges = {
  /** New causes: each gets its forge issue. */
  opened: Finding[];
  /** Still standing: reported already, never again; their text is refreshed. */
  kept: Finding[];
  /** Gone: their forge issue is closed. */
  resolved: OpenFinding[];
};

/** What a run changes, given the findings that stood before it and the ones it found. */
export function reconcileFindings(open: readonly OpenFinding[], found: readonly Finding[]): FindingChanges {
  const before = new Set(open.map((f) => f.key));
  const now = new Set(found.map((f) => f.key));
  return {
    opened: found.filter((f) => !before.has(f.key)),
    kept: found.filter((f) => before.has(f.key)),
    resolved: open.filter((f) => !now.has(f.key)),
  };
}

/** The forge issue that reports a finding: titled with its priority, labelled `supervisor` and the priority. */
export function findingIssue(
  finding: Finding,
  labels: { supervisor: string },
): { title: string; body: string; labels: string[] } {
  return {
    title: `[${finding.priority}] ${finding.check.replaceAll("_", " ")}: ${finding.subject}`.slice(0, 200),
    body: [
      finding.summary,
      "",
      `Found by Conveyor's supervisor (check \`${finding.check}\`, priority ${finding.priority}). It closes this issue when a later check no longer finds the cause.`,
    ].join("\n"),
    labels: [labels.supervisor, finding.priority],
  };
}

/**
 * The supervisor's checks, one function per area of the snapshot (src/domain/supervisor.ts has the types and
 * runs them). Pure.
 */
import { type State, TERMINAL_STATES, type TimerKind } from "./lifecycle.ts";
import type { Finding, IssueHealth, RunnerHealth, Snapshot } from "./supervisor.ts";
import { timersFor } from "./timers.ts";

const MINUTE = 60_000;

/** `95 min`, `3.5 h`, `2.0 d`: durations for a human. */
export function duration(ms: number): string {
  if (ms < 2 * 60 * MINUTE) return `${Math.round(ms / MINUTE)} min`;
  if (ms < 48 * 60 * MINUTE) return `${(ms / (60 * MINUTE)).toFixed(1)} h`;
  return `${(ms / (24 * 60 * MINUTE)).toFixed(1)} d`;
}

const GIB = 1024 ** 3;
const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`;
const percent = (ratio: number) => `${Math.round(ratio * 100)} %`;

/**
 * A runner's findings. Its host's figures are the operator's business only: they go in `detail`, never in
 * the summary a forge issue carries (a project's tracker may be public).
 */
export function runnerFindings(runner: RunnerHealth, snapshot: Snapshot): Finding[] {
  return [...rotationFindings(runner, snapshot), ...hostFindings(runner, snapshot)];
}

/** A suspect rotation stands this long: long enough for an operator to see it, then it resolves. */
export const ROTATION_WINDOW_MS = 7 * 24 * 60 * MINUTE;

/**
 * A runner's token rotated from an address it had not been seen at: a stolen token locking the real runner
 * out looks like this (and its replaced token still being presented, more so). The addresses are the
 * operator's: in `detail` only.
 */
function rotationFindings(runner: RunnerHealth, { now }: Snapshot): Finding[] {
  const { rotation } = runner;
  if (!rotation || now - rotation.at > ROTATION_WINDOW_MS) return [];
  const subject = `runner ${runner.name}`;
  const replaced = rotation.supersededSeenAt !== null && rotation.supersededSeenAt >= rotation.at;
  const when = new Date(rotation.at).toISOString();
  return [
    {
      key: `token_rotated:${runner.id}:${rotation.at}`,
      priority: "P1",
      check: "token_rotated",
      subject,
      summary: `${subject}'s token was rotated at ${when} from an address it had not been seen at${replaced ? ", and its replaced token was presented since" : ""} (addresses on the operator's dashboard): if the runner did not move, its token was stolen: revoke the runner and register it again.`,
      detail: `rotated from ${rotation.from}; seen before at ${rotation.before}${replaced ? `; the replaced token was presented at ${new Date(rotation.supersededSeenAt ?? 0).toISOString()}` : ""}`,
    },
  ];
}

function hostFindings(runner: RunnerHealth, { now, limits }: Snapshot): Finding[] {
  const subject = `runner ${runner.name}`;
  const onDashboard = "(figures on the operator's dashboard)";
  const silentFor = now - runner.lastSeenAt;
  if (silentFor > limits.runnerSilentMs) {
    // What an offline runner last reported is old news: only its silence is a finding.
    return [
      {
        key: `runner_offline:${runner.id}`,
        priority: "P1",
        check: "runner_offline",
        subject,
        summary: `${subject} has not been heard from for ${duration(silentFor)}: restart it, or revoke it if it is gone for good (its leased jobs requeue when their leases expire).`,
      },
    ];
  }
  const found: Finding[] = [];
  const hostFresh = runner.hostAt !== null && now - runner.hostAt <= limits.runnerSilentMs;
  if (runner.memory && hostFresh) {
    const { availableBytes, totalBytes } = runner.memory;
    const ratio = availableBytes / totalBytes;
    const state = `${gib(availableBytes)} of ${gib(totalBytes)} (${percent(ratio)}) available`;
    if (ratio < limits.memoryCrisisRatio) {
      found.push({
        key: `memory_crisis:${runner.id}`,
        priority: "P0",
        check: "memory",
        subject,
        summary: `${subject} is out of memory ${onDashboard}: sessions there may be killed; lower its slots or add memory.`,
        detail: state,
      });
    } else if (ratio < limits.memoryLowRatio) {
      found.push({
        key: `memory_low:${runner.id}`,
        priority: "P2",
        check: "memory",
        subject,
        summary: `${subject} is short of memory ${onDashboard}.`,
        detail: state,
      });
    }
  }
  if (runner.disk && runner.disk.totalBytes > 0) {
    const { freeBytes, totalBytes } = runner.disk;
    const ratio = freeBytes / totalBytes;
    const state = `${gib(freeBytes)} of ${gib(totalBytes)} (${percent(ratio)}) free`;
    if (ratio < limits.diskCriticalRatio) {
      found.push({
        key: `disk_full:${runner.id}`,
        priority: "P1",
        check: "disk",
        subject,
        summary: `${subject}'s disk is nearly full ${onDashboard}: free space or reap worktrees there before sessions fail.`,
        detail: state,
      });
    } else if (ratio < limits.diskLowRatio) {
      found.push({
        key: `disk_low:${runner.id}`,
        priority: "P3",
        check: "disk",
        subject,
        summary: `${subject}'s disk is getting full ${onDashboard}.`,
        detail: state,
      });
    }
  }
  if (runner.load && hostFresh && runner.load.load1 / runner.load.cpus > limits.loadPerCpu) {
    found.push({
      key: `load:${runner.id}`,
      priority: "P3",
      check: "load",
      subject,
      summary: `${subject} is overloaded ${onDashboard}.`,
      detail: `load ${runner.load.load1} on ${runner.load.cpus} CPUs`,
    });
  }
  if (runner.worktrees !== null && runner.worktrees > limits.maxWorktrees) {
    found.push({
      key: `worktrees:${runner.id}`,
      priority: "P4",
      check: "worktrees",
      subject,
      summary: `${subject} holds more worktrees than ${limits.maxWorktrees}: lower \`timeouts.retention\` or abandon what nobody will answer, and reap jobs remove them.`,
      detail: `${runner.worktrees} worktrees`,
    });
  }
  return found;
}

/**
 * The timer that bounds a state, if one does: its own (not the worktree's retention, nor the wait for a
 * runner, which only reminds and never moves the issue).
 */
export function stateTimer(state: State): TimerKind | null {
  return timersFor(state).find((timer) => timer !== "dispatch") ?? null;
}

export function issueFindings(issue: IssueHealth, { now, timeouts, limits }: Snapshot): Finding[] {
  const inState = now - issue.enteredAt;
  const subject = `#${issue.number}`;
  const timer = stateTimer(issue.state);
  if (timer !== null && inState > timeouts[timer] + limits.stuckGraceMs) {
    return [
      {
        key: `issue_stuck:${issue.number}:${issue.state}`,
        priority: "P1",
        check: "issue_stuck",
        subject,
        summary: `${subject} has been ${issue.state} for ${duration(inState)}, past its ${timer} limit of ${duration(timeouts[timer])}: its timer did not move it. The supervisor woke the issue; if it stays, look at its history.`,
        remedy: { kind: "wake_issue", number: issue.number },
      },
    ];
  }
  const quietFor = now - Math.max(issue.enteredAt, issue.lastEventAt);
  if (issue.state === "escalated" && quietFor > timeouts.renotify + limits.stuckGraceMs) {
    return [
      {
        key: `escalation_silent:${issue.number}`,
        priority: "P2",
        check: "escalation_silent",
        subject,
        summary: `${subject} has waited ${duration(inState)} for a human, and its reminder (every ${duration(timeouts.renotify)}) has not gone out for ${duration(quietFor)}. The supervisor woke the issue to remind them.`,
        remedy: { kind: "wake_issue", number: issue.number },
      },
    ];
  }
  if (issue.state === "queued" && inState > limits.queuedMs) {
    return [
      {
        key: `issue_waiting:${issue.number}`,
        priority: "P2",
        check: "issue_waiting",
        subject,
        summary: `${subject} has waited ${duration(inState)} for a runner: are runners up, is the daily budget spent, are all slots held?`,
      },
    ];
  }
  if (issue.state === "awaiting_approval" && inState > limits.approvalWaitMs) {
    return [
      {
        key: `approval_waiting:${issue.number}`,
        priority: "P3",
        check: "approval_waiting",
        subject,
        summary: `${subject}'s pull request touches protected paths and has waited ${duration(inState)} for a human's approval.`,
      },
    ];
  }
  return [];
}

export function jobFindings({ jobs, now, limits }: Snapshot): Finding[] {
  return jobs.flatMap((job): Finding[] => {
    const about = job.number === 0 ? `${job.kind} job` : `#${job.number}'s ${job.kind} job`;
    if (
      job.status === "leased" &&
      job.leaseExpiresAt !== null &&
      now - job.leaseExpiresAt > limits.stuckGraceMs
    ) {
      return [
        {
          key: `lease_overdue:${job.id}`,
          priority: "P1",
          check: "lease_overdue",
          subject: `job ${job.id}`,
          summary: `${about} (${job.id}) is still leased to ${job.runnerId ?? "a runner"} ${duration(now - job.leaseExpiresAt)} after its lease expired: the project's alarm is not running.`,
        },
      ];
    }
    // An issue's queued job is the issue's finding (`issue_waiting`); an agent's run has no issue to say it.
    if (job.status === "queued" && job.number === 0 && now - job.createdAt > limits.queuedMs) {
      return [
        {
          key: `job_waiting:${job.id}`,
          priority: "P2",
          check: "job_waiting",
          subject: `job ${job.id}`,
          summary: `${about} (${job.id}) has waited ${duration(now - job.createdAt)} for a runner.`,
        },
      ];
    }
    return [];
  });
}

/**
 * A dead letter stands while its issue is still in the state it was in (or escalated to) when the effect
 * failed: a human's retry, reply or abandon moves the issue on and answers it. A finished issue's dead letter
 * (a closing comment that never went out) is reported for `deadLetterWindowMs`.
 */
export function deadLetterFindings({ deadLetters, issues, now, limits }: Snapshot): Finding[] {
  const live = new Map(issues.map((issue) => [issue.number, issue]));
  return deadLetters.flatMap((entry): Finding[] => {
    const issue = live.get(entry.number);
    const stands = issue ? entry.seq >= issue.enteredSeq : now - entry.at <= limits.deadLetterWindowMs;
    if (!stands) return [];
    return [
      {
        key: `dead_letter:${entry.number}:${entry.seq}`,
        priority: "P1",
        check: "dead_letter",
        subject: `#${entry.number}`,
        summary: `Conveyor gave up on an action for #${entry.number}: ${entry.reason}. See the issue's page; \`/conveyor retry\` once the cause is fixed.`,
      },
    ];
  });
}

export function budgetFindings({ spentTodayUsd, dailyCapUsd, day, limits }: Snapshot): Finding[] {
  const spend = `$${spentTodayUsd.toFixed(2)} of $${dailyCapUsd.toFixed(2)}`;
  if (spentTodayUsd >= dailyCapUsd) {
    return [
      {
        key: `budget_cap:${day}`,
        priority: "P2",
        check: "budget",
        subject: "budget",
        summary: `The daily budget is spent (${spend} on ${day}, UTC): no session starts until tomorrow, or until \`dailyBudgetUsd\` is raised.`,
      },
    ];
  }
  if (dailyCapUsd > 0 && spentTodayUsd >= dailyCapUsd * limits.budgetWarnRatio) {
    return [
      {
        key: `budget_near:${day}`,
        priority: "P3",
        check: "budget",
        subject: "budget",
        summary: `Today's spend is near the daily cap: ${spend} on ${day} (UTC).`,
      },
    ];
  }
  return [];
}

// A dependency that merged, or an action that is done, has done its part.
const TROUBLED: readonly (State | null)[] = [
  "escalated",
  ...TERMINAL_STATES.filter((s) => s !== "merged" && s !== "done"),
];

/** A blocked issue waits on a dependency that needs a human (escalated) or was given up (abandoned). */
export function dependencyFindings({ dependencies, issues }: Snapshot): Finding[] {
  const blocked = new Set(issues.filter((i) => i.state === "blocked").map((i) => i.number));
  return dependencies.flatMap((edge): Finding[] => {
    if (!blocked.has(edge.dependent) || !TROUBLED.includes(edge.state)) return [];
    return [
      {
        key: `dependency:${edge.dependent}:${edge.dependency}`,
        priority: "P2",
        check: "dependency",
        subject: `#${edge.dependent}`,
        summary: `#${edge.dependent} is blocked by #${edge.dependency}, which is ${edge.state}: it will wait until a human answers or closes #${edge.dependency}, or removes the dependency.`,
      },
    ];
  });
}

/**
 * A finished issue's worktree is reaped at once when it merged or a human abandoned it, after
 * `timeouts.retention` when it was kept for a human: one still there past that (and the grace), with no reap
 * queued or done since its last session, is left over (P4), and a reap job removes it.
 */
export function leftoverFindings({ finished, now, timeouts, limits }: Snapshot): Finding[] {
  return finished.flatMap((issue): Finding[] => {
    if (issue.reapAt !== null && issue.reapAt >= issue.sessionAt) return [];
    const keptFor = issue.state === "merged" ? 0 : timeouts.retention;
    if (now - issue.endedAt <= keptFor + limits.stuckGraceMs) return [];
    return [
      {
        key: `leftover_worktree:${issue.number}:${issue.sessionAt}`,
        priority: "P4",
        check: "leftover_worktree",
        subject: `#${issue.number}`,
        summary: `#${issue.number} ${issue.state} ${duration(now - issue.endedAt)} ago and its worktree was never reaped: the supervisor queued a reap job.`,
        remedy: { kind: "reap", number: issue.number, sessionAt: issue.sessionAt },
      },
    ];
  });
}

import { describe, expect, it } from "vitest";
import { DEFAULT_TIMEOUTS_MS, STATES, type State } from "../../src/domain/lifecycle.ts";
import {
  type DeadLetterEntry,
  type DependencyEdge,
  type Finding,
  type FinishedWorktree,
  findingIssue,
  type IssueHealth,
  type JobHealth,
  type OpenFinding,
  PRIORITIES,
  type RunnerHealth,
  reconcileFindings,
  runChecks,
  type Snapshot,
} from "../../src/domain/supervisor.ts";
import { duration, stateTimer } from "../../src/domain/supervisor-checks.ts";
import { supervisorSettingsSchema } from "../../src/projects/config.ts";

const NOW = Date.UTC(2026, 10, 26, 12);
const MIN = 60_000;
const HOUR = 60 * MIN;
const GIB = 1024 ** 3;
const limits = supervisorSettingsSchema.parse({});

const healthy: RunnerHealth = {
  id: "r1",
  name: "build-a",
  lastSeenAt: NOW - MIN,
  disk: { freeBytes: 50 * GIB, totalBytes: 100 * GIB },
  memory: { availableBytes: 8 * GIB, totalBytes: 16 * GIB },
  load: { load1: 1, cpus: 4 },
  hostAt: NOW - MIN,
  worktrees: 3,
  rotation: null,
};

function snapshot(patch: Partial<Snapshot> = {}): Snapshot {
  return {
    now: NOW,
    runners: [healthy],
    issues: [],
    jobs: [],
    deadLetters: [],
    dependencies: [],
    finished: [],
    spentTodayUsd: 1,
    dailyCapUsd: 100,
    flakyChecks: [],
    day: "2026-11-26",
    timeouts: DEFAULT_TIMEOUTS_MS,
    limits,
    ...patch,
  };
}

const keys = (patch: Partial<Snapshot>) => runChecks(snapshot(patch)).map((f) => f.key);
const runner = (patch: Partial<RunnerHealth>) => ({ ...healthy, ...patch });
const issue = (number: number, state: State, inStateMs: number, enteredSeq = 5): IssueHealth => ({
  number,
  state,
  enteredAt: NOW - inStateMs,
  enteredSeq,
  lastEventAt: NOW - inStateMs,
});

describe("a healthy factory", () => {
  it("has no findings", () => {
    expect(runChecks(snapshot())).toEqual([]);
  });

  it("nor has one with no runners, issues or spend at all", () => {
    expect(runChecks(snapshot({ runners: [], spentTodayUsd: 0 }))).toEqual([]);
  });
});

describe("runners", () => {
  it("one not heard from past the silence limit is offline (P1); what it reported before is not judged", () => {
    const silent = runner({
      lastSeenAt: NOW - limits.runnerSilentMs - 1,
      disk: { freeBytes: 0, totalBytes: 100 },
      memory: { availableBytes: 0, totalBytes: 100 },
    });
    const findings = runChecks(snapshot({ runners: [silent] }));
    expect(findings).toEqual([
      expect.objectContaining({ key: "runner_offline:r1", priority: "P1", check: "runner_offline" }),
    ]);
    expect(findings[0]?.summary).toContain("runner build-a has not been heard from for 10 min");
    expect(keys({ runners: [runner({ lastSeenAt: NOW - limits.runnerSilentMs })] })).toEqual([]);
  });

  it.each([
    [0.049, ["memory_crisis:r1"], "P0"],
    [0.05, ["memory_low:r1"], "P2"],
    [0.149, ["memory_low:r1"], "P2"],
    [0.15, [], null],
  ])("available memory at %s of the total → %j", (ratio, expected, priority) => {
    const findings = runChecks(
      snapshot({ runners: [runner({ memory: { availableBytes: ratio * 1000, totalBytes: 1000 } })] }),
    );
    expect(findings.map((f) => f.key)).toEqual(expected);
    if (priority) expect(findings[0]?.priority).toBe(priority);
  });

  it("memory and load sampled longer ago than the silence limit are not judged", () => {
    const stale = runner({
      memory: { availableBytes: 1, totalBytes: 1000 },
      load: { load1: 100, cpus: 1 },
      hostAt: NOW - limits.runnerSilentMs - 1,
    });
    expect(keys({ runners: [stale] })).toEqual([]);
    expect(keys({ runners: [runner({ ...stale, hostAt: null })] })).toEqual([]);
  });

  it.each([
    [0.049, ["disk_full:r1"], "P1"],
    [0.05, ["disk_low:r1"], "P3"],
    [0.149, ["disk_low:r1"], "P3"],
    [0.15, [], null],
  ])("free disk at %s of the file system → %j", (ratio, expected, priority) => {
    const findings = runChecks(
      snapshot({ runners: [runner({ disk: { freeBytes: ratio * 1000, totalBytes: 1000 } })] }),
    );
    expect(findings.map((f) => f.key)).toEqual(expected);
    if (priority) expect(findings[0]?.priority).toBe(priority);
  });

  it("a runner's host figures are in the finding's detail, never in the summary a forge issue carries", () => {
    const sick = runner({
      memory: { availableBytes: 1 * GIB, totalBytes: 100 * GIB },
      disk: { freeBytes: 1 * GIB, totalBytes: 100 * GIB },
      load: { load1: 99, cpus: 2 },
      worktrees: 500,
    });
    const findings = runChecks(snapshot({ runners: [sick] }));
    expect(findings.map((f) => f.check).sort()).toEqual(["disk", "load", "memory", "worktrees"]);
    for (const finding of findings) {
      expect(finding.summary).not.toMatch(/GiB|%|\b99\b|\b500\b|CPUs/);
      expect(finding.detail).toMatch(/GiB|CPUs|500 worktrees/);
      expect(findingIssue(finding, { supervisor: "supervisor" }).body).not.toContain(finding.detail ?? "?");
    }
  });

  it("a token rotated from an address the runner was not seen at is a P1 for a week, addresses in its detail", () => {
    const rotation = {
      at: NOW - 60 * MIN,
      from: "203.0.113.9",
      before: "198.51.100.7",
      supersededSeenAt: null,
    };
    const [found] = runChecks(snapshot({ runners: [runner({ rotation })] }));
    expect(found).toMatchObject({
      key: `token_rotated:r1:${rotation.at}`,
      priority: "P1",
      check: "token_rotated",
    });
    expect(found?.summary).toContain("if the runner did not move, its token was stolen: revoke the runner");
    expect(found?.summary).not.toContain("203.0.113.9");
    expect(found?.detail).toBe("rotated from 203.0.113.9; seen before at 198.51.100.7");
    // Its replaced token presented since (the real runner locked out, or the thief): said too.
    const used = runChecks(
      snapshot({ runners: [runner({ rotation: { ...rotation, supersededSeenAt: NOW } })] }),
    );
    expect(used[0]?.summary).toContain("and its replaced token was presented since");
    // Offline or not, it is reported; a week later it is not.
    expect(keys({ runners: [runner({ rotation, lastSeenAt: NOW - 600 * MIN })] })).toContain(found?.key);
    const old = { ...rotation, at: NOW - 8 * 24 * 60 * MIN };
    expect(keys({ runners: [runner({ rotation: old })] })).toEqual([]);
  });

  it("a runner too old to report free disk, or one reporting a zero-sized file system, is not judged", () => {
    expect(keys({ runners: [runner({ disk: null, memory: null, load: null, worktrees: null })] })).toEqual(
      [],
    );
    expect(keys({ runners: [runner({ disk: { freeBytes: 0, totalBytes: 0 } })] })).toEqual([]);
  });

  it.each([
    [8, 4, []],
    [8.04, 4, ["load:r1"]],
    [3, 1, ["load:r1"]],
  ])("load %s on %s CPUs → %j (P3)", (load1, cpus, expected) => {
    const findings = runChecks(snapshot({ runners: [runner({ load: { load1, cpus } })] }));
    expect(findings.map((f) => f.key)).toEqual(expected);
    for (const f of findings) expect(f.priority).toBe("P3");
  });

  it("more worktrees than the limit is housekeeping (P4)", () => {
    expect(keys({ runners: [runner({ worktrees: limits.maxWorktrees })] })).toEqual([]);
    const findings = runChecks(snapshot({ runners: [runner({ worktrees: limits.maxWorktrees + 1 })] }));
    expect(findings).toEqual([expect.objectContaining({ key: "worktrees:r1", priority: "P4" })]);
  });

  it("each runner's findings are its own, and the most urgent come first", () => {
    const findings = runChecks(
      snapshot({
        runners: [
          runner({ id: "r2", name: "b", disk: { freeBytes: 1, totalBytes: 100 }, worktrees: 100 }),
          runner({ id: "r3", name: "c", memory: { availableBytes: 1, totalBytes: 100 } }),
        ],
      }),
    );
    expect(findings.map((f) => [f.priority, f.key])).toEqual([
      ["P0", "memory_crisis:r3"],
      ["P1", "disk_full:r2"],
      ["P4", "worktrees:r2"],
    ]);
  });
});

describe("issues", () => {
  it("every state bounded by a timer is stuck once past its limit and the grace, and is woken", () => {
    const timed = STATES.filter((state) => stateTimer(state) !== null);
    expect(timed).toEqual([
      "running",
      "awaiting_ci",
      "awaiting_review",
      "revising",
      // (A held merge waits on its vault item, which expires on the ProjectDO's alarm.)
      "merging",
      "escalated",
    ]);
    for (const state of timed) {
      const timer = stateTimer(state);
      if (!timer) throw new Error("unreachable");
      const limit = DEFAULT_TIMEOUTS_MS[timer] + limits.stuckGraceMs;
      // (A merge's approval wait has its own, shorter, finding: out of the way here.)
      const patient = { ...limits, approvalWaitMs: 30 * 24 * HOUR };
      // (Nor is an escalation's reminder overdue: one just went out.)
      const at = (inState: number) => ({ ...issue(7, state, inState), lastEventAt: NOW });
      expect(keys({ limits: patient, issues: [at(limit)] })).toEqual([]);
      const [finding] = runChecks(snapshot({ limits: patient, issues: [at(limit + 1)] }));
      expect(finding).toMatchObject({
        key: `issue_stuck:7:${state}`,
        priority: "P1",
        check: "issue_stuck",
        subject: "#7",
        remedy: { kind: "wake_issue", number: 7 },
      });
      expect(finding?.summary).toContain(`past its ${timer} limit`);
    }
  });

  it("the project's own timeouts set the limits", () => {
    const timeouts = { ...DEFAULT_TIMEOUTS_MS, ci: MIN };
    const inState = MIN + limits.stuckGraceMs + 1;
    expect(keys({ timeouts, issues: [issue(3, "awaiting_ci", inState)] })).toEqual([
      "issue_stuck:3:awaiting_ci",
    ]);
    expect(keys({ issues: [issue(3, "awaiting_ci", inState)] })).toEqual([]);
  });

  it("an escalation whose reminder is overdue is P2, and the issue is woken to send it", () => {
    const limit = DEFAULT_TIMEOUTS_MS.renotify + limits.stuckGraceMs;
    expect(keys({ issues: [issue(6, "escalated", limit)] })).toEqual([]);
    const [finding] = runChecks(snapshot({ issues: [issue(6, "escalated", limit + 1)] }));
    expect(finding).toMatchObject({
      key: "escalation_silent:6",
      priority: "P2",
      remedy: { kind: "wake_issue", number: 6 },
    });
    // A reminder went out an hour ago: nothing is overdue, however long the escalation has waited.
    const reminded = { ...issue(6, "escalated", 12 * HOUR), lastEventAt: NOW - HOUR };
    expect(keys({ issues: [reminded] })).toEqual([]);
    // Past the escalation's own limit the issue is stuck (P1), which says more.
    const expired = issue(6, "escalated", DEFAULT_TIMEOUTS_MS.escalation + limits.stuckGraceMs + 1);
    expect(keys({ issues: [expired] })).toEqual(["issue_stuck:6:escalated"]);
  });

  it("an issue waiting for a runner past the queue limit is P2; states without a limit are never stuck", () => {
    expect(keys({ issues: [issue(4, "queued", limits.queuedMs)] })).toEqual([]);
    const findings = runChecks(snapshot({ issues: [issue(4, "queued", limits.queuedMs + 1)] }));
    expect(findings).toEqual([expect.objectContaining({ key: "issue_waiting:4", priority: "P2" })]);
    for (const state of ["new", "blocked", "merged", "abandoned"] as const) {
      expect(keys({ issues: [issue(4, state, 365 * 24 * HOUR)] })).toEqual([]);
    }
  });

  it("a merge waiting for approval past its limit but within its timer is P3", () => {
    expect(keys({ issues: [issue(5, "awaiting_approval", limits.approvalWaitMs)] })).toEqual([]);
    expect(
      runChecks(snapshot({ issues: [issue(5, "awaiting_approval", limits.approvalWaitMs + 1)] })),
    ).toEqual([expect.objectContaining({ key: "approval_waiting:5", priority: "P3" })]);
  });
});

describe("jobs", () => {
  const job = (patch: Partial<JobHealth>): JobHealth => ({
    id: "j1",
    number: 3,
    kind: "implement",
    status: "leased",
    runnerId: "r1",
    leaseExpiresAt: NOW + MIN,
    createdAt: NOW - HOUR,
    ...patch,
  });

  it("a lease long past its expiry is P1: the project's alarm did not requeue it", () => {
    expect(keys({ jobs: [job({ leaseExpiresAt: NOW - limits.stuckGraceMs })] })).toEqual([]);
    expect(runChecks(snapshot({ jobs: [job({ leaseExpiresAt: NOW - limits.stuckGraceMs - 1 })] }))).toEqual([
      expect.objectContaining({ key: "lease_overdue:j1", priority: "P1", check: "lease_overdue" }),
    ]);
  });

  it("an agent's run waiting past the queue limit is P2; an issue's job is its issue's finding", () => {
    const old = NOW - limits.queuedMs - 1;
    const queued = { status: "queued" as const, leaseExpiresAt: null, runnerId: null, createdAt: old };
    expect(keys({ jobs: [job({ ...queued, number: 0, kind: "agent" })] })).toEqual(["job_waiting:j1"]);
    expect(keys({ jobs: [job(queued)] })).toEqual([]);
    expect(keys({ jobs: [job({ ...queued, number: 0, createdAt: NOW - limits.queuedMs })] })).toEqual([]);
  });

  it("finished jobs are never findings", () => {
    for (const status of ["done", "failed", "cancelled"] as const) {
      expect(keys({ jobs: [job({ status, leaseExpiresAt: 0, createdAt: 0, number: 0 })] })).toEqual([]);
    }
  });
});

describe("dead letters", () => {
  const dead = (patch: Partial<DeadLetterEntry> = {}): DeadLetterEntry => ({
    number: 9,
    seq: 6,
    at: NOW - HOUR,
    reason: "comment failed for good: 404",
    ...patch,
  });

  it("stand while the issue is still where the failure left it (P1)", () => {
    const findings = runChecks(snapshot({ deadLetters: [dead()], issues: [issue(9, "escalated", HOUR, 6)] }));
    expect(findings).toEqual([
      expect.objectContaining({
        key: "dead_letter:9:6",
        priority: "P1",
        check: "dead_letter",
        subject: "#9",
      }),
    ]);
    expect(findings[0]?.summary).toContain("comment failed for good: 404");
    // Recorded later in the state the issue was already in (an escalation's own comment failed).
    expect(keys({ deadLetters: [dead({ seq: 8 })], issues: [issue(9, "escalated", HOUR, 6)] })).toEqual([
      "dead_letter:9:8",
    ]);
  });

  it("are answered when the issue moved on (a human's retry or reply)", () => {
    expect(keys({ deadLetters: [dead()], issues: [issue(9, "queued", MIN, 7)] })).toEqual([]);
  });

  it("of a finished issue stand for the window only", () => {
    expect(keys({ deadLetters: [dead({ at: NOW - limits.deadLetterWindowMs })] })).toEqual([
      "dead_letter:9:6",
    ]);
    expect(keys({ deadLetters: [dead({ at: NOW - limits.deadLetterWindowMs - 1 })] })).toEqual([]);
  });
});

describe("budget", () => {
  it.each([
    [79.99, []],
    [80, ["budget_near:2026-11-26"]],
    [99.99, ["budget_near:2026-11-26"]],
    [100, ["budget_cap:2026-11-26"]],
    [150, ["budget_cap:2026-11-26"]],
  ])("$%s spent of $100 → %j", (spentTodayUsd, expected) => {
    expect(keys({ spentTodayUsd })).toEqual(expected);
  });

  it("the cap is P2, near it P3, and a new day is a new finding", () => {
    expect(runChecks(snapshot({ spentTodayUsd: 100 }))[0]?.priority).toBe("P2");
    expect(runChecks(snapshot({ spentTodayUsd: 90 }))[0]?.priority).toBe("P3");
    expect(keys({ spentTodayUsd: 100, day: "2026-11-27" })).toEqual(["budget_cap:2026-11-27"]);
  });

  it("a cap of zero is spent at once", () => {
    expect(keys({ spentTodayUsd: 0, dailyCapUsd: 0 })).toEqual(["budget_cap:2026-11-26"]);
  });
});

describe("flaky CI checks", () => {
  const flaky = (name: string, flips: number) => ({ name, flips, lastAt: NOW - MIN });

  it("a check that passed on re-run twice is a P3 finding; once is the infrastructure's", () => {
    const found = runChecks(snapshot({ flakyChecks: [flaky("test (ubuntu)", 2), flaky("lint", 1)] }));
    expect(found).toEqual([
      expect.objectContaining({
        key: "flaky_check:test (ubuntu)",
        priority: "P3",
        check: "flaky_check",
        subject: "check test (ubuntu)",
        summary: expect.stringMatching(
          /^CI check `test \(ubuntu\)` failed and then passed on re-run 2 times/,
        ),
      }),
    ]);
  });

  it("keeps one key per check however often it flips, and resolves when it stops", () => {
    const open = [
      { ...runChecks(snapshot({ flakyChecks: [flaky("t", 2)] }))[0], openedAt: NOW },
    ] as OpenFinding[];
    const again = runChecks(snapshot({ flakyChecks: [flaky("t", 5)] }));
    expect(reconcileFindings(open, again)).toMatchObject({ opened: [], kept: [{ key: "flaky_check:t" }] });
    expect(reconcileFindings(open, runChecks(snapshot())).resolved).toHaveLength(1);
  });
});

describe("dependencies", () => {
  const edge = (state: State | null, dependent = 11): DependencyEdge => ({
    dependent,
    dependency: 10,
    state,
  });
  const blocked = issue(11, "blocked", HOUR);

  it.each(STATES.map((state) => [state, state === "escalated" || state === "abandoned"] as const))(
    "a blocked issue whose dependency is %s → finding: %s",
    (state, expected) => {
      const found = keys({ issues: [blocked], dependencies: [edge(state)] });
      expect(found).toEqual(expected ? ["dependency:11:10"] : []);
    },
  );

  it("only blocked issues count, and an unknown dependency (not yet seen) is no trouble", () => {
    expect(keys({ issues: [issue(11, "queued", MIN)], dependencies: [edge("abandoned")] })).toEqual([]);
    expect(keys({ issues: [blocked], dependencies: [edge(null)] })).toEqual([]);
    expect(runChecks(snapshot({ issues: [blocked], dependencies: [edge("escalated")] }))[0]?.priority).toBe(
      "P2",
    );
  });
});

describe("leftover worktrees", () => {
  const ended = (patch: Partial<FinishedWorktree> = {}): FinishedWorktree => ({
    number: 4,
    state: "merged",
    endedAt: NOW - HOUR,
    sessionAt: NOW - 2 * HOUR,
    reapAt: null,
    ...patch,
  });

  it("a merged issue's worktree never reaped past the grace is P4, and a reap job removes it", () => {
    expect(runChecks(snapshot({ finished: [ended()] }))).toEqual([
      expect.objectContaining({
        key: `leftover_worktree:4:${NOW - 2 * HOUR}`,
        priority: "P4",
        remedy: { kind: "reap", number: 4, sessionAt: NOW - 2 * HOUR },
      }),
    ]);
    expect(keys({ finished: [ended({ endedAt: NOW - limits.stuckGraceMs })] })).toEqual([]);
  });

  it("an abandoned issue keeps its worktree for the retention first", () => {
    const keptFor = DEFAULT_TIMEOUTS_MS.retention + limits.stuckGraceMs;
    expect(keys({ finished: [ended({ state: "abandoned", endedAt: NOW - keptFor })] })).toEqual([]);
    expect(keys({ finished: [ended({ state: "abandoned", endedAt: NOW - keptFor - 1 })] })).toHaveLength(1);
  });

  it("a reap queued or done since the last session answers it; one from before that session does not", () => {
    expect(keys({ finished: [ended({ reapAt: NOW - 2 * HOUR })] })).toEqual([]);
    expect(keys({ finished: [ended({ reapAt: NOW - 3 * HOUR })] })).toHaveLength(1);
  });
});

describe("reconcileFindings", () => {
  const finding = (key: string, priority: Finding["priority"] = "P1"): Finding => ({
    key,
    priority,
    check: "disk",
    subject: "runner a",
    summary: key,
  });
  const open = (key: string): OpenFinding => ({ ...finding(key), openedAt: NOW - HOUR });

  it("opens new keys, keeps the ones still found, resolves the ones gone", () => {
    const changes = reconcileFindings([open("a"), open("b")], [finding("b"), finding("c")]);
    expect(changes.opened.map((f) => f.key)).toEqual(["c"]);
    expect(changes.kept.map((f) => f.key)).toEqual(["b"]);
    expect(changes.resolved.map((f) => f.key)).toEqual(["a"]);
  });

  it("the same findings on the next run change nothing: a finding is never reported twice", () => {
    const first = reconcileFindings([], [finding("a"), finding("b")]);
    expect(first.opened).toHaveLength(2);
    const stood = first.opened.map((f) => ({ ...f, openedAt: NOW }));
    expect(reconcileFindings(stood, [finding("a"), finding("b")])).toEqual({
      opened: [],
      kept: [finding("a"), finding("b")],
      resolved: [],
    });
  });

  it("a cause that comes back after it was resolved is opened again", () => {
    expect(reconcileFindings([], [finding("a")]).opened).toHaveLength(1);
    expect(reconcileFindings([open("a")], []).resolved).toHaveLength(1);
    expect(reconcileFindings([], [finding("a")]).opened.map((f) => f.key)).toEqual(["a"]);
  });

  it("nothing before and nothing now is nothing", () => {
    expect(reconcileFindings([], [])).toEqual({ opened: [], kept: [], resolved: [] });
  });

  it("the checks' keys are stable: the same snapshot twice gives the same keys", () => {
    const troubled = snapshot({
      runners: [runner({ lastSeenAt: NOW - HOUR })],
      issues: [issue(2, "awaiting_ci", 5 * HOUR)],
      deadLetters: [{ number: 2, seq: 9, at: NOW - MIN, reason: "x" }],
    });
    const later = { ...troubled, now: NOW + 10 * MIN };
    expect(runChecks(later).map((f) => f.key)).toEqual(runChecks(troubled).map((f) => f.key));
    expect(
      reconcileFindings(
        runChecks(troubled).map((f) => ({ ...f, openedAt: NOW })),
        runChecks(later),
      ).opened,
    ).toEqual([]);
  });
});

describe("findingIssue", () => {
  it("titles the issue with the priority and labels it supervisor + the priority", () => {
    for (const priority of PRIORITIES) {
      const issue = findingIssue(
        { key: "k", priority, check: "runner_offline", subject: "runner a", summary: "It is gone." },
        { supervisor: "supervisor" },
      );
      expect(issue.title).toBe(`[${priority}] runner offline: runner a`);
      expect(issue.labels).toEqual(["supervisor", priority]);
      expect(issue.body).toContain("It is gone.");
    }
  });
});

describe("duration", () => {
  it.each([
    [0, "0 min"],
    [90 * MIN, "90 min"],
    [3 * HOUR, "3.0 h"],
    [72 * HOUR, "3.0 d"],
  ])("%s ms → %s", (ms, text) => {
    expect(duration(ms)).toBe(text);
  });
});

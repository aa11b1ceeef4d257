import { describe, expect, it } from "vitest";
import {
  afterLostLease,
  BACKOFF_AFTER_UNCONFIRMED,
  type Claimant,
  enqueueAffinity,
  expiredLeases,
  isSession,
  leaseTerm,
  nextDeadline,
  type OpenJob,
  type QueuePolicy,
  selectJob,
  spendsBudget,
  UNCONFIRMED_BACKOFF,
  unconfirmedWait,
} from "../../src/domain/job-queue.ts";
import type { JobKind } from "../../src/domain/lifecycle.ts";

const POLICY: QueuePolicy = {
  parallel: 2,
  leaseMs: 60_000,
  confirmMs: 10_000,
  affinityGraceMs: 60_000,
  maxAttempts: 5,
  maxUnconfirmed: 10,
};
const KINDS: JobKind[] = ["implement", "revise", "resume", "reap"];
const NOW = 1_000_000;
const ME = "runner-me";
const OTHER = "runner-other";

type Job = OpenJob & { id: string };

let seq = 0;
function job(id: string, patch: Partial<Job> = {}): Job {
  seq++;
  return {
    id,
    seq,
    number: seq,
    kind: "implement",
    status: "queued",
    attempt: 1,
    runnerId: null,
    affinity: null,
    affinityUntil: 0,
    leaseExpiresAt: null,
    confirmed: false,
    cancelled: false,
    unconfirmed: 0,
    notBefore: 0,
    ...patch,
  };
}

const leased = (id: string, patch: Partial<Job> = {}) =>
  job(id, { status: "leased", runnerId: OTHER, leaseExpiresAt: NOW + 30_000, confirmed: true, ...patch });

const claimant = (holding: number[] = []): Claimant => ({ runnerId: ME, holding: new Set(holding) });

const pick = (open: Job[], who = claimant(), parallel = POLICY.parallel, now = NOW) =>
  selectJob(open, who, now, parallel)?.id ?? null;

describe("affinity and its grace period", () => {
  type Affinity = "none" | "me" | "other";
  // [affinity, the claimant holds the worktree, within the grace period, may the claimant take it]
  const TABLE: [Affinity, boolean, boolean, boolean][] = [
    ["none", false, true, true],
    ["none", false, false, true],
    ["none", true, true, true],
    ["none", true, false, true],
    ["me", false, true, true],
    ["me", false, false, true],
    ["me", true, true, true],
    ["me", true, false, true],
    ["other", false, true, false],
    ["other", false, false, true],
    ["other", true, true, true],
    ["other", true, false, true],
  ];
  const cases = KINDS.flatMap((kind) => TABLE.map((row) => [kind, ...row] as const));

  it.each(cases)("%s, affinity %s, holding %s, in grace %s → %s", (kind, affinity, holds, inGrace, takes) => {
    const j = job("j", {
      kind,
      affinity: affinity === "none" ? null : affinity === "me" ? ME : OTHER,
      affinityUntil: affinity === "none" ? 0 : inGrace ? NOW + 1 : NOW,
    });
    expect(pick([j], claimant(holds ? [j.number] : []))).toBe(takes ? "j" : null);
  });
});

describe("slots", () => {
  // Every parallel × leased sessions × kind: a session job needs a free slot, reap never does.
  const cases = [1, 2, 3].flatMap((parallel) =>
    Array.from({ length: parallel + 1 }, (_, used) => used).flatMap((used) =>
      KINDS.map((kind) => [parallel, used, kind, kind === "reap" || used < parallel] as const),
    ),
  );

  it.each(cases)("parallel %i, %i leased sessions: %s → %s", (parallel, used, kind, takes) => {
    const busy = Array.from({ length: used }, (_, i) => leased(`l${i}`, { kind: KINDS[i % 3] }));
    expect(pick([...busy, job("j", { kind })], claimant(), parallel)).toBe(takes ? "j" : null);
  });

  it("a leased reap holds no slot", () => {
    expect(pick([leased("r", { kind: "reap" }), leased("s"), job("j")])).toBe("j");
  });

  it("a cancelled lease holds its slot until the runner lets go", () => {
    expect(pick([leased("c", { cancelled: true }), leased("s"), job("j")])).toBe(null);
  });
});

describe("one leased job per issue", () => {
  it.each(KINDS.flatMap((held) => KINDS.map((next) => [held, next] as const)))(
    "%s leased blocks %s of the same issue",
    (held, next) => {
      const busy = leased("l", { kind: held });
      expect(pick([busy, job("j", { kind: next, number: busy.number })], claimant(), 10)).toBe(null);
    },
  );

  it("another issue's lease blocks nothing", () => {
    expect(pick([leased("l"), job("j")])).toBe("j");
  });
});

describe("claim order", () => {
  const inGraceFor = (runner: string) => ({ affinity: runner, affinityUntil: NOW + 1 });
  const pastGraceFor = (runner: string) => ({ affinity: runner, affinityUntil: NOW });
  const cases: [string, () => Job[], Claimant, string | null][] = [
    ["nothing queued", () => [], claimant(), null],
    ["revise before implement", () => [job("impl"), job("rev", { kind: "revise" })], claimant(), "rev"],
    ["resume before implement", () => [job("impl"), job("res", { kind: "resume" })], claimant(), "res"],
    [
      "continuations FIFO among themselves",
      () => [job("res", { kind: "resume" }), job("rev", { kind: "revise" })],
      claimant(),
      "res",
    ],
    ["implement FIFO", () => [job("a"), job("b")], claimant(), "a"],
    ["reap before implement", () => [job("impl"), job("reap", { kind: "reap" })], claimant(), "reap"],
    [
      "an urgent agent run (an escalation's triage) before new work",
      () => [
        job("impl"),
        job("gardener", { kind: "agent", number: 0 }),
        job("triage", { kind: "agent", number: 0, urgent: true }),
      ],
      claimant(),
      "triage",
    ],
    [
      "an urgent agent run after work in flight",
      () => [job("triage", { kind: "agent", number: 0, urgent: true }), job("rev", { kind: "revise" })],
      claimant(),
      "rev",
    ],
    [
      "revise before reap",
      () => [job("reap", { kind: "reap" }), job("rev", { kind: "revise" })],
      claimant(),
      "rev",
    ],
    [
      "own continuation before an older one of another runner",
      () => [
        job("theirs", { kind: "revise", ...pastGraceFor(OTHER) }),
        job("mine", { kind: "revise", ...inGraceFor(ME) }),
      ],
      claimant(),
      "mine",
    ],
    [
      "held worktree before an older implement",
      () => [job("a"), job("b", { number: 77 })],
      claimant([77]),
      "b",
    ],
    [
      "another runner's continuation in grace leaves the implement",
      () => [job("rev", { kind: "revise", ...inGraceFor(OTHER) }), job("impl")],
      claimant(),
      "impl",
    ],
    [
      "slots full: only reap",
      () => [leased("l1"), leased("l2"), job("rev", { kind: "revise" }), job("reap", { kind: "reap" })],
      claimant(),
      "reap",
    ],
    [
      "slots full, no reap: nothing",
      () => [leased("l1"), leased("l2"), job("rev", { kind: "revise" })],
      claimant(),
      null,
    ],
    [
      "a blocked continuation does not hide the next job",
      () => {
        const busy = leased("l");
        return [busy, job("rev", { kind: "revise", number: busy.number }), job("impl")];
      },
      claimant(),
      "impl",
    ],
  ];

  it.each(cases)("%s", (_name, open, who, expected) => {
    expect(pick(open(), who)).toBe(expected);
  });
});

describe("enqueue affinity", () => {
  const cases = KINDS.flatMap((kind) =>
    [null, OTHER].map(
      (last) =>
        [
          kind,
          last,
          kind === "implement" || last === null
            ? { affinity: null, affinityUntil: 0 }
            : { affinity: last, affinityUntil: NOW + POLICY.affinityGraceMs },
        ] as const,
    ),
  );

  it.each(cases)("%s after runner %s → %j", (kind, last, expected) => {
    expect(enqueueAffinity(kind, last, NOW, POLICY)).toEqual(expected);
  });
});

describe("a lost lease", () => {
  const attempts = Array.from({ length: POLICY.maxAttempts }, (_, i) => i + 1);
  const lost = {
    runnerId: ME,
    cancelled: false,
    confirmed: true,
    affinity: null,
    affinityUntil: 0,
    unconfirmed: 0,
  };
  const fresh = { unconfirmed: 0, notBefore: 0 };

  it.each(attempts)("attempt %i", (attempt) => {
    const outcome = afterLostLease({ ...lost, attempt }, "lease expired", NOW, POLICY);
    if (attempt < POLICY.maxAttempts) {
      expect(outcome).toEqual({
        action: "requeue",
        attempt: attempt + 1,
        affinity: ME,
        affinityUntil: NOW + POLICY.affinityGraceMs,
        ...fresh,
      });
    } else {
      expect(outcome).toEqual({ action: "fail", reason: "lease expired on attempt 5 of 5" });
    }
  });

  it.each(attempts)("cancelled, attempt %i → cancel", (attempt) => {
    expect(afterLostLease({ ...lost, attempt, cancelled: true }, "x", NOW, POLICY)).toEqual({
      action: "cancel",
    });
  });

  // Nobody confirmed the lease (its runner died while the claim was answered): no attempt began.
  it.each(attempts)(
    "never confirmed, attempt %i → back as it was, same attempt and affinity, counted",
    (attempt) => {
      const unconfirmed = { ...lost, attempt, confirmed: false, affinity: OTHER, affinityUntil: NOW + 5 };
      expect(afterLostLease(unconfirmed, "lease expired", NOW, POLICY)).toEqual({
        action: "requeue",
        attempt,
        affinity: OTHER,
        affinityUntil: NOW + 5,
        unconfirmed: 1,
        notBefore: 0,
      });
    },
  );

  it("never confirmed by a runner since revoked → no wait for it, still no attempt spent, not counted", () => {
    const unconfirmed = {
      ...lost,
      attempt: 2,
      confirmed: false,
      affinity: ME,
      affinityUntil: NOW + 5,
      unconfirmed: 4,
    };
    expect(afterLostLease(unconfirmed, "runner revoked", NOW, POLICY, true)).toEqual({
      action: "requeue",
      attempt: 2,
      affinity: null,
      affinityUntil: 0,
      unconfirmed: 4,
      notBefore: 0,
    });
  });

  // Leased again and again, confirmed never (a runner that dies on the job): not free forever.
  const streak = Array.from({ length: POLICY.maxUnconfirmed }, (_, i) => i);
  it.each(streak)("the %i-th unconfirmed lease in a row before this one", (before) => {
    const unconfirmed = { ...lost, attempt: 1, confirmed: false, unconfirmed: before };
    const outcome = afterLostLease(unconfirmed, "lease expired", NOW, POLICY);
    const count = before + 1;
    if (count >= POLICY.maxUnconfirmed) {
      expect(outcome).toEqual({
        action: "fail",
        reason: "no runner confirmed its lease 10 times in a row (jobs.maxUnconfirmed 10)",
        unconfirmed: 10,
      });
      return;
    }
    expect(outcome).toMatchObject({ action: "requeue", attempt: 1, unconfirmed: count });
    const wait = outcome.action === "requeue" ? outcome.notBefore - NOW : Number.NaN;
    if (count < BACKOFF_AFTER_UNCONFIRMED) expect(outcome).toMatchObject({ notBefore: 0 });
    else {
      // 30 s doubling to 15 min, less up to a fifth of jitter.
      const full = Math.min(UNCONFIRMED_BACKOFF.maxMs, UNCONFIRMED_BACKOFF.baseMs * 2 ** (count - 3));
      expect(wait).toBeGreaterThanOrEqual(full * 0.8);
      expect(wait).toBeLessThanOrEqual(full);
    }
  });

  it("a job waiting out its backoff is offered to nobody until then", () => {
    const open = [job("backing-off", { notBefore: NOW + 1 }), job("next")];
    expect(pick(open)).toBe("next");
    expect(pick(open, claimant(), POLICY.parallel, NOW + 1)).toBe("backing-off");
    expect(unconfirmedWait(2, NOW)).toBe(0);
    expect(unconfirmedWait(3, NOW, () => 0)).toBe(NOW + 30_000);
    expect(unconfirmedWait(20, NOW, () => 0)).toBe(NOW + 15 * 60_000);
  });

  it("a new lease lasts the confirmation window, a confirmed one the full lease", () => {
    expect(leaseTerm(false, POLICY)).toBe(POLICY.confirmMs);
    expect(leaseTerm(true, POLICY)).toBe(POLICY.leaseMs);
    expect(leaseTerm(false, { leaseMs: 5_000, confirmMs: 10_000 })).toBe(5_000);
  });
});

describe("an issue's reap", () => {
  it("runs before the issue's jobs queued after it, even a continuation, whatever the ranks", () => {
    // Abandoned (a reap, waiting for the runner that holds the worktree), then retried: a new implement.
    const reap = job("reap", { kind: "reap", number: 40, affinity: OTHER, affinityUntil: NOW + 60_000 });
    const retry = job("retry", { number: 40 });
    const resume = job("resume", { kind: "resume", number: 40 });
    expect(pick([reap, retry, resume])).toBeNull();
    // Other issues' work goes on meanwhile.
    expect(pick([reap, retry, job("other")])).toBe("other");
    // Its grace period over, the reap goes first; then the next job.
    expect(pick([reap, retry, resume], claimant(), POLICY.parallel, NOW + 60_000)).toBe("reap");
    expect(pick([retry, resume], claimant(), POLICY.parallel, NOW + 60_000)).toBe("resume");
  });

  it("does not hold back a job of its issue queued before it", () => {
    const earlier = job("earlier", { kind: "revise", number: 41 });
    expect(pick([earlier, job("reap", { kind: "reap", number: 41 })])).toBe("earlier");
  });
});

describe("deadlines", () => {
  it("finds expired leases only", () => {
    const open = [
      leased("due", { leaseExpiresAt: NOW }),
      leased("later", { leaseExpiresAt: NOW + 1 }),
      job("queued", { leaseExpiresAt: NOW - 1 }),
    ];
    expect(expiredLeases(open, NOW).map((j) => j.id)).toEqual(["due"]);
  });

  it.each([
    ["nothing open", [], null],
    ["a lease", [leased("l", { leaseExpiresAt: NOW + 500 })], NOW + 500],
    ["a grace period", [job("g", { affinity: OTHER, affinityUntil: NOW + 200 })], NOW + 200],
    ["a grace period already over", [job("g", { affinity: OTHER, affinityUntil: NOW })], null],
    [
      "the earliest of both",
      [leased("l", { leaseExpiresAt: NOW + 500 }), job("g", { affinity: OTHER, affinityUntil: NOW + 200 })],
      NOW + 200,
    ],
    ["a queued job without affinity", [job("q")], null],
    ["a backoff", [job("b", { notBefore: NOW + 300 })], NOW + 300],
    ["a backoff already over", [job("b", { notBefore: NOW })], null],
  ] as const)("%s", (_name, open, expected) => {
    expect(nextDeadline(open, NOW)).toBe(expected);
  });
});

describe("agent runs in the queue", () => {
  const agent = (id: string, patch: Partial<Job> = {}) => job(id, { kind: "agent", number: 0, ...patch });

  it("holds no issue slot: an agent run starts while every slot is held by sessions", () => {
    const open = [leased("s1"), leased("s2"), agent("a")];
    expect(pick(open, claimant(), 2)).toBe("a");
    expect(pick([leased("s1"), job("implement")], claimant(), 1)).toBeNull();
  });

  it("waits behind issue work of every kind", () => {
    for (const kind of KINDS) {
      expect(pick([agent("a"), job(kind, { kind })])).toBe(kind);
    }
  });

  it("runs one at a time per project (agent runs share number 0)", () => {
    expect(pick([agent("a1", { status: "leased", runnerId: OTHER }), agent("a2")])).toBeNull();
    expect(pick([agent("a1"), agent("a2")])).toBe("a1");
  });

  it("waits for no runner: it has no worktree to return to", () => {
    expect(enqueueAffinity("agent", OTHER, NOW, POLICY)).toEqual({ affinity: null, affinityUntil: 0 });
  });

  it("is no session, and spends the budget", () => {
    const table = (["implement", "revise", "resume", "update", "reap", "agent"] as const).map((kind) => [
      kind,
      isSession(kind),
      spendsBudget(kind),
    ]);
    expect(table).toEqual([
      ["implement", true, true],
      ["revise", true, true],
      ["resume", true, true],
      ["update", true, true],
      ["reap", false, false],
      ["agent", false, true],
    ]);
  });
});

describe("leased jobs as slots", () => {
  it("counts leased jobs given by number and kind alone, as the ProjectDO reads them", () => {
    const queued = [job("a", { number: 1 }), job("b", { number: 2 })];
    const slot = (number: number, kind: JobKind = "implement") => ({
      number,
      kind,
      status: "leased" as const,
    });
    // The issue at work is busy: its queued job waits.
    expect(selectJob<Job>([slot(1), ...queued], claimant(), NOW, 2)?.id).toBe("b");
    // Every slot taken by sessions: no session starts.
    expect(selectJob<Job>([slot(7), slot(8), ...queued], claimant(), NOW, 2)).toBeNull();
    // A reap holds no slot.
    expect(selectJob<Job>([slot(7), slot(8, "reap"), ...queued], claimant(), NOW, 2)?.id).toBe("a");
  });
});

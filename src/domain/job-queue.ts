/**
 * A project's job queue as pure decisions: which queued job a claiming runner gets (slots, order, affinity and
 * its grace period) and what becomes of a job whose lease is lost. The ProjectDO applies them; no I/O here.
 */
import { type BackoffPolicy, backoffDelay } from "./backoff.ts";
import type { JobKind as IssueJobKind } from "./lifecycle.ts";

/** An issue's jobs, and `agent`: a run of one of the project's agents, about no issue (its number is 0). */
export type JobKind = IssueJobKind | "agent";

export type QueuePolicy = {
  /** Leased session jobs at once: the project's `parallel`. */
  parallel: number;
  /** A confirmed lease's length: each heartbeat extends it by this much. */
  leaseMs: number;
  /**
   * A new lease's length until its runner confirms it (its first heartbeat): a runner that died while its
   * claim was answered, or never got the answer, gives the job back this soon and costs it no attempt.
   */
  confirmMs: number;
  /** How long a job waits for its preferred runner before any runner may take it. */
  affinityGraceMs: number;
  /** Leases a job may lose (expiry or a retryable failure) before it fails. */
  maxAttempts: number;
  /**
   * Leases in a row no runner confirms before the job fails (its issue escalates). They cost no attempt, but
   * they are not free: from the third on, the job waits with backoff before it is offered again.
   */
  maxUnconfirmed: number;
};

/** The queue's view of an open (queued or leased) job. */
export type OpenJob = {
  /** Enqueue order. */
  seq: number;
  number: number;
  kind: JobKind;
  status: "queued" | "leased";
  attempt: number;
  /** The runner that holds, or last held, the lease. */
  runnerId: string | null;
  /** The runner the job waits for until `affinityUntil`: it holds the worktree and the session transcript. */
  affinity: string | null;
  affinityUntil: number;
  leaseExpiresAt: number | null;
  /** Its runner confirmed the lease (heartbeat or report): the attempt has begun. */
  confirmed: boolean;
  /** Cancelled while leased: the runner is told to stop, and the job still occupies its slot until it does. */
  cancelled: boolean;
  /** Leases in a row that no runner confirmed, since its last confirmed one. */
  unconfirmed: number;
  /** Not offered before this (the backoff after leases nobody confirmed); 0: at once. */
  notBefore: number;
  /** Goes ahead of new work, behind continuations and reaps: a short run a human waits for (an escalation's triage). */
  urgent?: boolean;
};

/** What the choice reads of a leased job: the slot it holds, the issue it keeps busy. */
export type LeasedSlot = Pick<OpenJob, "number" | "kind"> & { status: "leased" };

export type Claimant = {
  runnerId: string;
  /** Numbers of this project's issues whose worktree the runner holds. */
  holding: ReadonlySet<number>;
};

/**
 * Session jobs hold one of the project's slots and report to their issue; reaping a worktree does neither,
 * nor does an agent run (agent runs share number 0, so one runs at a time per project).
 */
export const isSession = (kind: JobKind) => kind !== "reap" && kind !== "agent";

/** Jobs that spend the model budget: none of them starts once the project's daily cap is reached. */
export const spendsBudget = (kind: JobKind) => kind !== "reap";

/** Continuations first (their session's prompt cache is warm), then cleanup, then fresh work, then agents. */
const RANK: Record<JobKind, number> = { revise: 0, resume: 0, update: 0, reap: 1, implement: 2, agent: 3 };

const prefers = (job: OpenJob, claimant: Claimant) =>
  job.affinity === claimant.runnerId || claimant.holding.has(job.number);

/** Affinity alone: during its grace period only the preferred runner, or one holding the worktree, may take it. */
const mayTake = (job: OpenJob, claimant: Claimant, now: number) =>
  job.affinity === null || now >= job.affinityUntil || prefers(job, claimant);

/**
 * The queued job `claimant` gets now, or null. A session job needs a free slot; no job starts while another
 * job of the same issue is leased (they would share a worktree), nor before a reap of its issue queued
 * ahead of it (the reap is about the sessions before: run after a new one, it would delete that one's
 * worktree and transcript). Order: rank (an urgent job just ahead of implement), then jobs whose worktree the
 * claimant holds, then FIFO.
 */
export function selectJob<J extends OpenJob>(
  open: readonly (J | LeasedSlot)[],
  claimant: Claimant,
  now: number,
  parallel: number,
): J | null {
  let sessions = 0;
  const busy = new Set<number>();
  /** Each issue's first queued reap, in enqueue order. */
  const reaps = new Map<number, number>();
  for (const job of open) {
    if (job.status === "queued" && job.kind === "reap" && !reaps.has(job.number))
      reaps.set(job.number, job.seq);
    if (job.status !== "leased") continue;
    busy.add(job.number);
    if (isSession(job.kind)) sessions++;
  }
  const reapAhead = (job: J) => job.kind !== "reap" && (reaps.get(job.number) ?? job.seq) < job.seq;
  const candidates = open.filter(
    (job): job is J =>
      job.status === "queued" &&
      job.notBefore <= now &&
      !busy.has(job.number) &&
      !reapAhead(job) &&
      (!isSession(job.kind) || sessions < parallel) &&
      mayTake(job, claimant, now),
  );
  // Urgent: ahead of new work (implement sessions, other agent runs), behind work in flight and reaps.
  const rank = (job: J) => (job.urgent ? RANK.implement - 0.5 : RANK[job.kind]);
  candidates.sort(
    (a, b) =>
      rank(a) - rank(b) || Number(prefers(b, claimant)) - Number(prefers(a, claimant)) || a.seq - b.seq,
  );
  return candidates[0] ?? null;
}

/** Where a new job waits first: continuations and reaps for the runner of the issue's previous job. */
export function enqueueAffinity(
  kind: JobKind,
  lastRunner: string | null,
  now: number,
  policy: QueuePolicy,
): Pick<OpenJob, "affinity" | "affinityUntil"> {
  if (kind === "implement" || kind === "agent" || lastRunner === null)
    return { affinity: null, affinityUntil: 0 };
  return { affinity: lastRunner, affinityUntil: now + policy.affinityGraceMs };
}

/** How long a lease lasts from now: short until its runner confirms it, then the full lease. */
export const leaseTerm = (confirmed: boolean, policy: Pick<QueuePolicy, "leaseMs" | "confirmMs">): number =>
  confirmed ? policy.leaseMs : Math.min(policy.confirmMs, policy.leaseMs);

export type LostLease =
  /**
   * Back in the queue for another attempt, first for the same runner ("git is the checkpoint" after that); or
   * for the same attempt when nobody confirmed the lease, counted, and from the third in a row not before
   * `notBefore`.
   */
  | {
      action: "requeue";
      attempt: number;
      affinity: string | null;
      affinityUntil: number;
      unconfirmed: number;
      notBefore: number;
    }
  /** `unconfirmed`: no runner confirmed its lease `maxUnconfirmed` times in a row. */
  | { action: "fail"; reason: string; unconfirmed?: number }
  /** Cancelled while leased: nothing is left to retry. */
  | { action: "cancel" };

/** From this many leases in a row that nobody confirmed, the job waits with backoff before it is offered again. */
export const BACKOFF_AFTER_UNCONFIRMED = 3;

/** The wait after the third unconfirmed lease in a row: 30 s, doubling to 15 min. */
export const UNCONFIRMED_BACKOFF: BackoffPolicy = { baseMs: 30_000, maxMs: 15 * 60_000, jitter: 0.2 };

/** When a job whose lease went unconfirmed `unconfirmed` times in a row may be offered again. */
export function unconfirmedWait(unconfirmed: number, now: number, random = Math.random): number {
  if (unconfirmed < BACKOFF_AFTER_UNCONFIRMED) return 0;
  return now + backoffDelay(unconfirmed - BACKOFF_AFTER_UNCONFIRMED + 1, UNCONFIRMED_BACKOFF, random);
}

/**
 * A lease expired, its runner reported a retryable failure, or its runner was revoked (`cause` says which).
 * A revoked runner (`runnerGone`) never comes back for the job, so nobody waits for it. A lease its runner
 * never confirmed started no attempt: the job goes back as it was, same attempt, same affinity, but the
 * lease is counted: a job that one runner after another takes and never confirms (a runner that dies on it,
 * an answer that never arrives) waits with backoff, and fails after `maxUnconfirmed` in a row. A revoked
 * runner's lease says nothing about the job and is not counted.
 */
export function afterLostLease(
  job: Pick<
    OpenJob,
    "attempt" | "runnerId" | "cancelled" | "confirmed" | "affinity" | "affinityUntil" | "unconfirmed"
  >,
  cause: string,
  now: number,
  policy: QueuePolicy,
  runnerGone = false,
): LostLease {
  if (job.cancelled) return { action: "cancel" };
  if (!job.confirmed) {
    // Nobody waits for a revoked runner, even where the job was waiting for it before this lease.
    const waitsForGone = runnerGone && job.affinity === job.runnerId;
    const affinity = waitsForGone
      ? { affinity: null, affinityUntil: 0 }
      : { affinity: job.affinity, affinityUntil: job.affinityUntil };
    const unconfirmed = runnerGone ? job.unconfirmed : job.unconfirmed + 1;
    if (unconfirmed >= policy.maxUnconfirmed) {
      return {
        action: "fail",
        reason: `no runner confirmed its lease ${unconfirmed} times in a row (jobs.maxUnconfirmed ${policy.maxUnconfirmed})`,
        unconfirmed,
      };
    }
    const notBefore = runnerGone ? 0 : unconfirmedWait(unconfirmed, now);
    return { action: "requeue", attempt: job.attempt, ...affinity, unconfirmed, notBefore };
  }
  if (job.attempt >= policy.maxAttempts) {
    return { action: "fail", reason: `${cause} on attempt ${job.attempt} of ${policy.maxAttempts}` };
  }
  const attempt = job.attempt + 1;
  const fresh = { unconfirmed: 0, notBefore: 0 };
  if (runnerGone) return { action: "requeue", attempt, affinity: null, affinityUntil: 0, ...fresh };
  return {
    action: "requeue",
    attempt,
    affinity: job.runnerId,
    affinityUntil: now + policy.affinityGraceMs,
    ...fresh,
  };
}

export const expiredLeases = <J extends OpenJob>(open: readonly J[], now: number): J[] =>
  open.filter((job) => job.status === "leased" && job.leaseExpiresAt !== null && job.leaseExpiresAt <= now);

/** What `nextDeadline` reads of a job. */
export type DeadlineFields = Pick<
  OpenJob,
  "status" | "leaseExpiresAt" | "affinity" | "affinityUntil" | "notBefore"
>;

/** The next moment the queue changes by itself: a lease expires, a grace period or a backoff ends. */
export function nextDeadline(open: readonly DeadlineFields[], now: number): number | null {
  const times = open.flatMap((job) => {
    if (job.status === "leased") return job.leaseExpiresAt === null ? [] : [job.leaseExpiresAt];
    return [
      ...(job.affinity !== null && job.affinityUntil > now ? [job.affinityUntil] : []),
      ...(job.notBefore > now ? [job.notBefore] : []),
    ];
  });
  return times.length > 0 ? Math.min(...times) : null;
}

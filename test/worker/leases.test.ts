/**
 * The leasing module on its own, against a real Durable Object's SQLite: its store, outbox and records are
 * the ProjectDO's kind, the hooks a recorder. The ProjectDO's RPC paths over it are in jobs.test.ts.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { JobStore, type StoredJob } from "../../durable-objects/project/jobs/job-store.ts";
import { type LeaseHooks, Leases } from "../../durable-objects/project/jobs/leases.ts";
import { ProjectRecords, RECORD_CHANNELS } from "../../durable-objects/project/records.ts";
import { Outbox } from "../../durable-objects/shared/outbox.ts";
import { Wakeups } from "../../durable-objects/shared/wakeups.ts";
import type { JobSpec, ProjectPolicy } from "../../src/contracts/project-object.ts";
import type { EventEnvelope } from "../../src/issue-events.ts";

const T0 = 1_800_000_000_000;
const POLICY: ProjectPolicy = {
  parallel: 1,
  leaseMs: 60_000,
  confirmMs: 15_000,
  affinityGraceMs: 30_000,
  maxAttempts: 2,
  maxUnconfirmed: 5,
  budget: { issueUsd: 10, issueTurns: 500, sessionTurns: 50, dailyUsd: 100, eventDailyUsd: 5 },
};

/** Counts its wakes: a lease that frees a job must wake the claims waiting for one. */
class CountedWakeups extends Wakeups {
  woken = 0;
  override wake(): void {
    this.woken++;
    super.wake();
  }
}

type Harness = {
  leases: Leases;
  store: JobStore;
  outbox: Outbox;
  hooks: string[];
  wakes: () => number;
  project: string;
  sql: SqlStorage;
};

/** Runs `body` inside a fresh (never used) project object, on its own storage. */
async function withLeases<R>(
  body: (h: Harness) => R | Promise<R>,
  overrides: Partial<LeaseHooks> = {},
): Promise<R> {
  const project = `leases-${crypto.randomUUID().slice(0, 8)}`;
  const stub = env.PROJECTS.get(env.PROJECTS.idFromName(project));
  return runInDurableObject(stub, async (_instance, state) => {
    const store = new JobStore(state.storage.sql);
    const outbox = new Outbox(state.storage.sql);
    const records = new ProjectRecords(outbox, store);
    const waiters = new CountedWakeups();
    const hooks: string[] = [];
    const recorder: LeaseHooks = {
      leased: (job) => hooks.push(`leased ${job.id}`),
      requeued: (job) => hooks.push(`requeued ${job.id}`),
      ended: (_project, job, reason) => hooks.push(`ended ${job.id}: ${reason}`),
      isEventRun: () => false,
      eventSpendUsd: () => 0,
      isUrgent: () => false,
      ...overrides,
    };
    store.saveMeta(project, POLICY);
    const leases = new Leases(state.storage, store, records, waiters, recorder);
    return body({
      leases,
      store,
      outbox,
      hooks,
      wakes: () => waiters.woken,
      project,
      sql: state.storage.sql,
    });
  });
}

function spec(project: string, number: number, kind: JobSpec["kind"] = "implement"): JobSpec {
  return {
    kind,
    project,
    issue: { number, title: `Issue ${number}`, body: "" },
    repo: { fullName: "acme/web", cloneUrl: "https://forge.test/acme/web.git", defaultBranch: "main" },
    branch: `conveyor/${number}`,
    headSha: null,
    iteration: 1,
    sessionId: null,
    instructions: null,
    budget: { maxTurns: 50, usdRemaining: 10 },
    sandbox: { allowedDomains: [], projectSettings: false },
    promptCacheTtl: "5m",
  };
}

function queue(h: Harness, number: number, kind: JobSpec["kind"] = "implement"): StoredJob {
  return h.store.insert({
    id: `${h.project}.${number}.${kind}`,
    key: `${h.project}#${number}:${kind}`,
    number,
    kind,
    status: "queued",
    attempt: 1,
    spec: spec(h.project, number, kind),
    runnerId: null,
    leaseToken: null,
    leaseExpiresAt: null,
    leasedAt: null,
    cancelled: false,
    confirmed: false,
    unconfirmed: 0,
    notBefore: 0,
    affinity: null,
    affinityUntil: 0,
    sessionId: null,
    branch: null,
    headSha: null,
    createdAt: T0,
    updatedAt: T0,
  });
}

/** The lifecycle events the module wrote for issues, in order. */
function issueEvents(h: Harness): EventEnvelope[] {
  return h.outbox
    .due([RECORD_CHANNELS.issue], Number.POSITIVE_INFINITY, 100)
    .map((row) => JSON.parse(row.payload) as EventEnvelope);
}

const jobRows = (h: Harness) =>
  h.outbox
    .due([RECORD_CHANNELS.d1], Number.POSITIVE_INFINITY, 100)
    .map((row) => JSON.parse(row.payload) as { table: string; row: { id: string; status: string } })
    .filter((record) => record.table === "jobs")
    .map((record) => `${record.row.id} ${record.row.status}`);

describe("lease", () => {
  it("leases the next job on a short, unconfirmed lease with a fresh token, and records it", async () => {
    await withLeases((h) => {
      const job = queue(h, 7);
      const claim = h.leases.lease("r1", [], T0);
      expect(claim).toMatchObject({
        job: { id: job.id, attempt: 1 },
        leaseMs: 15_000,
        leaseExpiresAt: T0 + 15_000,
      });
      expect(claim?.leaseToken).toMatch(/^lease_/);
      expect(h.store.byId(job.id)).toMatchObject({
        status: "leased",
        runnerId: "r1",
        leaseToken: claim?.leaseToken,
        confirmed: false,
        leasedAt: T0,
      });
      expect(h.hooks).toEqual([`leased ${job.id}`]);
      expect(jobRows(h)).toEqual([`${job.id} leased`]);
      // Nobody may have received the lease: the issue hears nothing yet.
      expect(issueEvents(h)).toEqual([]);
    });
  });

  it("gives a session job only while a slot is free; select leases nothing", async () => {
    await withLeases((h) => {
      const first = queue(h, 1);
      const second = queue(h, 2);
      expect(h.leases.select("r1", [], T0)?.id).toBe(first.id);
      expect(h.store.byId(first.id)?.status).toBe("queued");
      expect(h.leases.lease("r1", [], T0)?.job.id).toBe(first.id);
      // parallel 1: the second session waits.
      expect(h.leases.lease("r2", [], T0)).toBeNull();
      expect(h.store.byId(second.id)?.status).toBe("queued");
    });
  });

  it("chooses over the queue's columns: no job's spec is read but the chosen one's", async () => {
    await withLeases((h) => {
      const first = queue(h, 1);
      const second = queue(h, 2);
      // A spec no parse survives: a choice that read it would throw.
      h.sql.exec("UPDATE jobs SET spec = '{' WHERE id = ?", second.id);
      expect(h.leases.select("r1", [], T0)?.id).toBe(first.id);
      expect(h.leases.lease("r1", [], T0)?.job).toMatchObject({ id: first.id, branch: "conveyor/1" });
    });
  });

  it("tells the urgency hook an agent run's id, read from its spec: an urgent run goes ahead", async () => {
    const asked: (string | null)[] = [];
    const isUrgent = (runId: string | null) => asked.push(runId) > 0 && runId === "triage-1";
    await withLeases(
      (h) => {
        queue(h, 1);
        const agent = queue(h, 0, "agent");
        h.sql.exec(
          `UPDATE jobs SET spec = json_set(spec, '$.agent', json('{"runId":"triage-1"}')) WHERE id = ?`,
          agent.id,
        );
        const chosen = h.leases.select("r1", [], T0);
        expect(asked).toEqual([null, "triage-1"]);
        expect(chosen?.id).toBe(agent.id);
      },
      { isUrgent },
    );
  });

  it("hands out no session past the daily cap, but still a reap", async () => {
    await withLeases((h) => {
      queue(h, 1);
      h.store.recordSpend("u1", 1, new Date(T0).toISOString().slice(0, 10), {
        usd: POLICY.budget.dailyUsd,
        turns: 1,
      });
      expect(h.leases.lease("r1", [], T0)).toBeNull();
      const reap = queue(h, 2, "reap");
      expect(h.leases.lease("r1", [], T0)?.job.id).toBe(reap.id);
    });
  });
});

describe("confirm", () => {
  it("tells the issue `dispatched` once, when the runner first speaks under the lease", async () => {
    await withLeases((h) => {
      const job = queue(h, 3);
      h.leases.lease("r1", [], T0);
      const leased = h.store.byId(job.id) as StoredJob;
      const confirmed = h.leases.confirm(h.project, leased, T0 + 1);
      expect(confirmed.confirmed).toBe(true);
      expect(h.leases.confirm(h.project, confirmed, T0 + 2)).toBe(confirmed);
      expect(issueEvents(h)).toEqual([
        {
          id: `job:${job.id}:1:dispatched`,
          project: h.project,
          number: 3,
          cause: { kind: "job", id: job.id },
          event: { type: "dispatched", jobId: job.id, runnerId: "r1", attempt: 1 },
        },
      ]);
    });
  });

  it("says nothing to an issue for a reap", async () => {
    await withLeases((h) => {
      const job = queue(h, 3, "reap");
      h.leases.lease("r1", [], T0);
      h.leases.confirm(h.project, h.store.byId(job.id) as StoredJob, T0 + 1);
      expect(issueEvents(h)).toEqual([]);
    });
  });
});

describe("fence", () => {
  it("404 for an unknown job, 403 for another runner's, 409 for a stale token; ok with the policy", async () => {
    await withLeases((h) => {
      const job = queue(h, 4);
      const claim = h.leases.lease("r1", [], T0);
      const token = claim?.leaseToken ?? "";
      expect(h.leases.fence("nope", "r1", token, T0)).toEqual({
        ok: false,
        status: 404,
        error: "job nope is unknown",
      });
      expect(h.leases.fence(job.id, "r2", token, T0)).toMatchObject({ ok: false, status: 403 });
      expect(h.leases.fence(job.id, "r1", "lease_stale", T0)).toMatchObject({ ok: false, status: 409 });
      expect(h.leases.fence(job.id, "r1", token, T0)).toMatchObject({
        ok: true,
        job: { id: job.id },
        project: h.project,
        policy: POLICY,
      });
    });
  });
});

describe("expiry", () => {
  it("an unconfirmed lease that expires requeues at no attempt's cost, and its token is void", async () => {
    await withLeases((h) => {
      const job = queue(h, 5);
      const token = h.leases.lease("r1", [], T0)?.leaseToken ?? "";
      h.leases.expire(T0 + 14_999);
      expect(h.store.byId(job.id)?.status).toBe("leased");
      h.leases.expire(T0 + 15_000);
      expect(h.store.byId(job.id)).toMatchObject({ status: "queued", attempt: 1, leaseToken: null });
      expect(h.hooks).toEqual([`leased ${job.id}`, `requeued ${job.id}`]);
      expect(h.wakes()).toBe(1);
      expect(h.leases.fence(job.id, "r1", token, T0 + 15_001)).toMatchObject({ ok: false, status: 409 });
    });
  });

  it("leases nobody confirms are counted; the issue hears when the backoff begins; a confirmation ends the streak", async () => {
    await withLeases((h) => {
      const job = queue(h, 5);
      let now = T0;
      for (let i = 1; i <= 3; i++) {
        h.leases.lease("r1", [], now);
        now += POLICY.confirmMs;
        h.leases.expire(now);
        now = Math.max(now, h.store.byId(job.id)?.notBefore ?? 0);
      }
      expect(h.store.byId(job.id)).toMatchObject({ status: "queued", attempt: 1, unconfirmed: 3 });
      expect(issueEvents(h).map((e) => [e.id, e.event.type])).toEqual([
        [`job:${job.id}:unconfirmed:3`, "lease_unconfirmed"],
      ]);
      h.leases.lease("r1", [], now);
      const confirmed = h.leases.confirm(h.project, h.store.byId(job.id) as StoredJob, now + 1);
      expect(confirmed).toMatchObject({ confirmed: true, unconfirmed: 0, notBefore: 0 });
    });
  });

  it("a confirmed lease that expires costs an attempt and waits for its runner for the grace period", async () => {
    await withLeases((h) => {
      const job = queue(h, 6);
      h.leases.lease("r1", [], T0);
      h.store.save({ ...(h.store.byId(job.id) as StoredJob), confirmed: true, leaseExpiresAt: T0 + 60_000 });
      h.leases.expire(T0 + 60_000);
      expect(h.store.byId(job.id)).toMatchObject({
        status: "queued",
        attempt: 2,
        affinity: "r1",
        affinityUntil: T0 + 60_000 + POLICY.affinityGraceMs,
      });
      // Within the grace period only its runner gets it.
      expect(h.leases.select("r2", [], T0 + 60_001)).toBeNull();
      expect(h.leases.select("r1", [], T0 + 60_001)?.id).toBe(job.id);
    });
  });
});

describe("loss", () => {
  it("out of attempts, the job fails and its issue's session fails with the reason", async () => {
    await withLeases((h) => {
      const job = queue(h, 8);
      h.leases.lease("r1", [], T0);
      const leased = { ...(h.store.byId(job.id) as StoredJob), confirmed: true, attempt: POLICY.maxAttempts };
      h.store.save(leased);
      h.leases.lose(h.project, leased, "runner failed: disk full", T0 + 1, POLICY);
      expect(h.store.byId(job.id)?.status).toBe("failed");
      expect(h.hooks.at(-1)).toBe(`ended ${job.id}: runner failed: disk full on attempt 2 of 2`);
      expect(issueEvents(h).map((e) => e.event)).toEqual([
        {
          type: "phase",
          phase: "failed",
          jobId: job.id,
          attempt: 2,
          reason: "runner failed: disk full on attempt 2 of 2",
        },
      ]);
    });
  });

  it("a revoked runner's leases requeue at once for any other runner", async () => {
    await withLeases((h) => {
      const job = queue(h, 9);
      h.leases.lease("r1", [], T0);
      h.store.save({ ...(h.store.byId(job.id) as StoredJob), confirmed: true });
      expect(h.leases.dropRunner("r2", T0 + 1)).toBe(0);
      expect(h.leases.dropRunner("r1", T0 + 1)).toBe(1);
      expect(h.store.byId(job.id)).toMatchObject({
        status: "queued",
        attempt: 2,
        affinity: null,
        leaseToken: null,
      });
      expect(h.leases.select("r2", [], T0 + 2)?.id).toBe(job.id);
    });
  });

  it("a cancelled job that loses its lease ends cancelled, and its issue hears nothing", async () => {
    await withLeases((h) => {
      const job = queue(h, 10);
      h.leases.lease("r1", [], T0);
      const cancelled = { ...(h.store.byId(job.id) as StoredJob), cancelled: true };
      h.leases.lose(h.project, cancelled, "lease expired", T0 + 1, POLICY);
      expect(h.store.byId(job.id)?.status).toBe("cancelled");
      expect(h.hooks.at(-1)).toBe(`ended ${job.id}: cancelled`);
      expect(issueEvents(h)).toEqual([]);
    });
  });
});

/** `POST /runner/v1/report`: a runner's heartbeats and events for all its jobs in one call, each job fenced alone. */
import { describe, expect, it } from "vitest";
import { reportResponse } from "../../src/runner-api/report-contract.ts";
import {
  call,
  claim,
  complete,
  enqueue,
  issueView,
  jobsOf,
  type Runner,
  setup,
  taken,
} from "./support/jobs.ts";

const HEAD = "abc1234";

const implement = (project: string, number: number) =>
  enqueue(
    issueView(project, number, { state: "queued", iteration: 0, sessionId: null, branch: null }),
    "implement",
    `${project}#${number}:1:0`,
  );

async function report(runner: Runner, jobs: object[]) {
  const res = await call(runner, "report", { jobs });
  if (res.status !== 200) throw new Error(`report: ${res.status} ${await res.text()}`);
  return reportResponse.parse(await res.json()).jobs;
}

describe("a runner's report", () => {
  it("renews each current lease and writes its events; a stale, foreign or unknown job is refused alone", async () => {
    const { project, runners } = await setup("report", { parallel: 4 }, 2);
    const [a, b] = runners as [Runner, Runner];
    for (const n of [1, 2, 3, 4]) await implement(project, n);
    const [one, two, done] = [
      taken(await claim(a, [project])),
      taken(await claim(a, [project])),
      taken(await claim(a, [project])),
    ];
    const foreign = taken(await claim(b, [project]));
    expect((await complete(a, done, { phase: "awaiting_ci", headSha: HEAD })).status).toBe(204);
    const unknown = `${project}.9.ffffffffffff`;

    const answers = await report(a, [
      { jobId: one.job.id, leaseToken: one.leaseToken, heartbeat: true },
      {
        jobId: two.job.id,
        leaseToken: two.leaseToken,
        heartbeat: true,
        events: [
          { kind: "session", sessionId: "sess-2", worktree: "/w/2" },
          { kind: "pushed", branch: two.job.branch, headSha: HEAD },
        ],
      },
      { jobId: foreign.job.id, leaseToken: foreign.leaseToken, heartbeat: true },
      { jobId: done.job.id, leaseToken: done.leaseToken, heartbeat: true },
      { jobId: unknown, leaseToken: one.leaseToken, heartbeat: true },
      {
        jobId: "not-a-job",
        leaseToken: one.leaseToken,
        events: [{ kind: "log", level: "info", message: "x" }],
      },
    ]);

    const jobs = await jobsOf(project);
    const stored = (id: string) => jobs.find((j) => j.id === id);
    for (const [claimed, answer] of [
      [one, answers[0]],
      [two, answers[1]],
    ] as const) {
      expect(answer).toMatchObject({
        jobId: claimed.job.id,
        ok: true,
        lease: { leaseMs: 60_000, cancelled: false },
      });
      // Renewed at the full lease, past the short one of the claim.
      expect(answer?.ok && answer.lease?.leaseExpiresAt).toBeGreaterThan(claimed.leaseExpiresAt);
      expect(stored(claimed.job.id)).toMatchObject({
        confirmed: true,
        leaseExpiresAt: answer?.ok && answer.lease?.leaseExpiresAt,
      });
    }
    expect(stored(two.job.id)).toMatchObject({ sessionId: "sess-2", headSha: HEAD });
    expect(answers.slice(2)).toEqual([
      {
        jobId: foreign.job.id,
        ok: false,
        status: 403,
        error: `job ${foreign.job.id} is not leased to this runner`,
      },
      { jobId: done.job.id, ok: false, status: 409, error: `job ${done.job.id} is done` },
      { jobId: unknown, ok: false, status: 404, error: `job ${unknown} is unknown` },
      { jobId: "not-a-job", ok: false, status: 404, error: "job not-a-job is unknown" },
    ]);
    // The other runner's lease is untouched: still the claim's short one, unconfirmed.
    expect(stored(foreign.job.id)).toMatchObject({
      confirmed: false,
      leaseExpiresAt: foreign.leaseExpiresAt,
    });

    // A stale token is refused alone too; the lease it names is not renewed by it.
    const [stale, fresh] = await report(a, [
      { jobId: one.job.id, leaseToken: "lease_stale", heartbeat: true },
      { jobId: two.job.id, leaseToken: two.leaseToken, heartbeat: true },
    ]);
    expect(stale).toEqual({
      jobId: one.job.id,
      ok: false,
      status: 409,
      error: `the lease on job ${one.job.id} is not current`,
    });
    expect(fresh).toMatchObject({ ok: true, lease: { leaseMs: 60_000 } });
  });

  it.each([
    [{ jobs: [] }, /^jobs: /],
    [{ jobs: [{ jobId: "p.1.x", leaseToken: "t" }] }, /renews or reports something/],
    [
      {
        jobs: [
          { jobId: "p.1.x", leaseToken: "t", heartbeat: true },
          { jobId: "p.1.x", leaseToken: "t", heartbeat: true },
        ],
      },
      /a job is in the report twice/,
    ],
    [{ jobs: [{ jobId: "p.1.x", leaseToken: "t", events: [{ kind: "nonsense" }] }] }, /^jobs\.0\.events\.0/],
  ])("%j → 400, and nothing changes", async (body, error) => {
    const { runners } = await setup("report-bad", {}, 1);
    const res = await call(runners[0] as Runner, "report", body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(error);
  });

  it("needs the runner's token", async () => {
    const res = await call(null, "report", { jobs: [{ jobId: "p.1.x", leaseToken: "t", heartbeat: true }] });
    expect(res.status).toBe(401);
  });
});

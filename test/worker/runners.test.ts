import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/crypto/tokens.ts";
import { projectStub } from "../../src/project-stub.ts";
import { page, sessionCookie } from "./dashboard-support.ts";
import {
  call,
  claim,
  enqueue,
  issueView,
  newRunner,
  register,
  registrationToken,
  seedProject,
} from "./support/jobs.ts";
import { freshProject, OPERATOR } from "./support/webhooks.ts";

const BASE = "https://conveyor.test";

describe("registration", () => {
  it("a registration token registers one runner, whose own token then works", async () => {
    const { token, expiresAt } = await registrationToken();
    expect(token).toMatch(/^cvreg_[0-9a-f]{64}$/);
    expect(expiresAt).toBeGreaterThan(Date.now() + 59 * 60_000);

    const res = await register(token, "build-a");
    expect(res.status).toBe(201);
    const runner = (await res.json()) as { runnerId: string; token: string };
    expect(runner.token).toMatch(/^cvr_[0-9a-f]{64}$/);
    // Only hashes are stored.
    const stored = await env.DB.prepare("SELECT name, token_hash FROM runners WHERE id = ?")
      .bind(runner.runnerId)
      .first();
    expect(stored).toEqual({ name: "build-a", token_hash: await sha256Hex(runner.token) });
    const used = await env.DB.prepare("SELECT used_by FROM registration_tokens WHERE token_hash = ?")
      .bind(await sha256Hex(token))
      .first();
    expect(used).toEqual({ used_by: runner.runnerId });

    const project = freshProject("reg");
    expect(await claim(runner, [project])).toBeNull();

    const again = await register(token, "build-b");
    expect([again.status, await again.json()]).toEqual([
      401,
      { error: "registration token is unknown, used or expired" },
    ]);
  });

  it("of two registrations racing for one token, one wins", async () => {
    const { token } = await registrationToken();
    const statuses = await Promise.all(
      [register(token, "x"), register(token, "y")].map(async (r) => (await r).status),
    );
    expect(statuses.sort()).toEqual([201, 401]);
  });

  it("an expired or unknown registration token → 401", async () => {
    const expired = `cvreg_${"e".repeat(64)}-${Date.now()}`;
    await env.DB.prepare(
      "INSERT INTO registration_tokens (token_hash, created_at, expires_at) VALUES (?, 0, 1)",
    )
      .bind(await sha256Hex(expired))
      .run();
    for (const token of [expired, `cvreg_${"0".repeat(64)}`]) {
      expect((await register(token)).status).toBe(401);
    }
  });

  it.each([
    [{ name: "x", version: "1" }, /^registrationToken: /],
    [{ registrationToken: "short", name: "x", version: "1" }, /^registrationToken: /],
  ])("400 for %j", async (body, error) => {
    const res = await call(null, "register", body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(error);
  });

  it("413 for a body beyond 2 MiB", async () => {
    const res = await call(null, "register", JSON.stringify({ name: "x".repeat(3 * 1024 * 1024) }));
    expect([res.status, await res.json()]).toEqual([413, { error: "body exceeds 2 MiB" }]);
  });

  it("registration tokens are for operators only; their lifetime is bounded", async () => {
    const anonymous = await SELF.fetch(`${BASE}/api/v1/runners/tokens`, { method: "POST" });
    expect(anonymous.status).toBe(401);
    const tooLong = await SELF.fetch(`${BASE}/api/v1/runners/tokens`, {
      method: "POST",
      headers: OPERATOR,
      body: JSON.stringify({ ttlSeconds: 30 * 24 * 3600 }),
    });
    expect(tooLong.status).toBe(400);
    const short = await registrationToken({ ttlSeconds: 120 });
    expect(short.expiresAt).toBeLessThanOrEqual(Date.now() + 120_000);
  });
});

describe("runner auth", () => {
  it.each([
    [{}, "missing bearer token"],
    [{ authorization: "Bearer cvr_unknown" }, "unknown runner token"],
    [{ authorization: `Bearer ${env.CONVEYOR_ADMIN_TOKEN}` }, "unknown runner token"],
  ])("%j → 401", async (headers, error) => {
    for (const path of ["claim", "jobs/p.1.abc/heartbeat"]) {
      const res = await SELF.fetch(`${BASE}/runner/v1/${path}`, { method: "POST", headers, body: "{}" });
      expect([res.status, await res.json()]).toEqual([401, { error }]);
    }
  });

  it("claim validates its body", async () => {
    const runner = await newRunner();
    for (const [body, error] of [
      [{ waitMs: 60_000 }, /^waitMs: /],
      [{ projects: ["Not A Project"] }, /^projects\.0: /],
      [{ holding: "x" }, /^holding: /],
    ] as const) {
      const res = await call(runner, "claim", body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
    }
  });
});

describe("GET /api/v1/runners", () => {
  it("lists runners with when they were last seen and the jobs they hold", async () => {
    const project = freshProject("list");
    await seedProject(project);
    const runner = await newRunner("lister");
    await enqueue(issueView(project, 3, { state: "queued", iteration: 0 }), "implement", `${project}#3:1:0`);
    const claimed = await claim(runner, [project]);
    await projectStub(env, project).drain();

    const res = await SELF.fetch(`${BASE}/api/v1/runners`, { headers: OPERATOR });
    expect(res.status).toBe(200);
    const { runners } = (await res.json()) as { runners: { id: string }[] };
    const listed = runners.find((r) => r.id === runner.runnerId);
    expect(listed).toMatchObject({ name: "lister", version: "0.1.0", lastSeenAt: expect.any(Number) });
    expect(listed).toMatchObject({
      jobs: [{ id: claimed?.job.id, project, number: 3, kind: "implement", attempt: 1 }],
    });
    expect(JSON.stringify(runners)).not.toContain("token");
  });

  it("a runner that says it stops is offline at once; its next call brings it back", async () => {
    const runner = await newRunner("stopper");
    const presence = async () => {
      const res = await SELF.fetch(`${BASE}/api/v1/runners`, { headers: OPERATOR });
      const { runners } = (await res.json()) as { runners: { id: string; presence: unknown }[] };
      return runners.find((r) => r.id === runner.runnerId)?.presence;
    };
    expect(await presence()).toEqual({ status: "idle" });
    expect((await call(runner, "offline", {})).status).toBe(204);
    expect(await presence()).toEqual({ status: "offline", since: expect.any(Number), stopped: true });
    expect((await call(null, "offline", {})).status).toBe(401);
    await call(runner, "claim", { waitMs: 0, projects: [freshProject("back")] });
    expect(await presence()).toEqual({ status: "idle" });
  });

  it("records the disk use a runner reports with its claims, when it changed", async () => {
    const runner = await newRunner("disky");
    const diskOf = async () => {
      const res = await SELF.fetch(`${BASE}/api/v1/runners`, { headers: OPERATOR });
      const { runners } = (await res.json()) as {
        runners: { id: string; diskBytes: number | null; worktrees: number | null }[];
      };
      const listed = runners.find((r) => r.id === runner.runnerId);
      return { diskBytes: listed?.diskBytes, worktrees: listed?.worktrees };
    };
    expect(await diskOf()).toEqual({ diskBytes: null, worktrees: null });
    const project = freshProject("disk");
    const claimWith = (disk?: object) => call(runner, "claim", { waitMs: 0, projects: [project], disk });
    expect((await claimWith({ bytes: 5_000_000, worktrees: 2 })).status).toBe(204);
    expect(await diskOf()).toEqual({ diskBytes: 5_000_000, worktrees: 2 });
    // A claim without a report (an older runner) keeps the last one; a malformed one is refused.
    expect((await claimWith()).status).toBe(204);
    expect((await claimWith({ bytes: -1, worktrees: 0 })).status).toBe(400);
    expect(await diskOf()).toEqual({ diskBytes: 5_000_000, worktrees: 2 });
    expect((await claimWith({ bytes: 4096, worktrees: 0 })).status).toBe(204);
    expect(await diskOf()).toEqual({ diskBytes: 4096, worktrees: 0 });
  });

  it("records free disk, memory and load reported with claims; memory and load at most once a minute", async () => {
    const runner = await newRunner("healthy");
    const listed = async () => {
      const res = await SELF.fetch(`${BASE}/api/v1/runners`, { headers: OPERATOR });
      const { runners } = (await res.json()) as { runners: ({ id: string } & Record<string, unknown>)[] };
      const row = runners.find((r) => r.id === runner.runnerId);
      return {
        diskFreeBytes: row?.diskFreeBytes,
        diskTotalBytes: row?.diskTotalBytes,
        memAvailableBytes: row?.memAvailableBytes,
        memTotalBytes: row?.memTotalBytes,
        load1: row?.load1,
        cpus: row?.cpus,
      };
    };
    const project = freshProject("host");
    const claimWith = (body: object) => call(runner, "claim", { waitMs: 0, projects: [project], ...body });
    const disk = { bytes: 1_000, worktrees: 1, freeBytes: 2_000_000, totalBytes: 10_000_000 };
    const host = { memAvailableBytes: 3_000, memTotalBytes: 8_000, load1: 1.5, cpus: 4 };
    expect((await claimWith({ disk, host })).status).toBe(204);
    expect(await listed()).toEqual({
      diskFreeBytes: 2_000_000,
      diskTotalBytes: 10_000_000,
      memAvailableBytes: 3_000,
      memTotalBytes: 8_000,
      load1: 1.5,
      cpus: 4,
    });
    // Within the minute a new sample is not written; free disk that changed is.
    const later = { memAvailableBytes: 1_000, memTotalBytes: 8_000, load1: 3, cpus: 4 };
    expect((await claimWith({ disk: { ...disk, freeBytes: 1_000_000 }, host: later })).status).toBe(204);
    expect(await listed()).toMatchObject({ diskFreeBytes: 1_000_000, memAvailableBytes: 3_000, load1: 1.5 });
    // Once the last record is a minute old, the next sample is.
    await env.DB.prepare("UPDATE runners SET host_at = host_at - 60000 WHERE id = ?")
      .bind(runner.runnerId)
      .run();
    expect((await claimWith({ host: later })).status).toBe(204);
    expect(await listed()).toMatchObject({ memAvailableBytes: 1_000, load1: 3 });
    // Malformed reports are refused at the boundary.
    expect((await claimWith({ host: { ...later, memTotalBytes: 0 } })).status).toBe(400);
    expect((await claimWith({ host: { ...later, load1: "high" } })).status).toBe(400);
  });

  it("records the host a runner reports with a heartbeat under its lease: one busy with long sessions claims nothing", async () => {
    const runner = await newRunner("busy");
    const project = freshProject("busy");
    await seedProject(project);
    await enqueue(issueView(project, 3, { state: "queued", iteration: 0 }), "implement", `${project}#3:1:0`);
    const claimed = await claim(runner, [project]);
    if (!claimed) throw new Error("no job claimed");
    const memoryOf = async () =>
      await env.DB.prepare(
        "SELECT mem_available_bytes AS mem, disk_free_bytes AS free FROM runners WHERE id = ?",
      )
        .bind(runner.runnerId)
        .first();
    expect(await memoryOf()).toEqual({ mem: null, free: null });
    const host = { memAvailableBytes: 512, memTotalBytes: 8_192, load1: 7, cpus: 2 };
    const disk = { bytes: 10, worktrees: 1, freeBytes: 99, totalBytes: 1_000 };
    // A heartbeat under a lease that is not current records nothing.
    const stale = await call(runner, `jobs/${claimed.job.id}/heartbeat`, {
      leaseToken: "lease_nope",
      host,
      disk,
    });
    expect(stale.status).toBe(409);
    expect(await memoryOf()).toEqual({ mem: null, free: null });
    const res = await call(runner, `jobs/${claimed.job.id}/heartbeat`, {
      leaseToken: claimed.leaseToken,
      host,
      disk,
    });
    expect(res.status).toBe(200);
    expect(await memoryOf()).toEqual({ mem: 512, free: 99 });
  });

  it("a runner holding back says why with its claim, which leases nothing; its claim without it leases again", async () => {
    const runner = await newRunner("held");
    const project = freshProject("held");
    await seedProject(project);
    await enqueue(issueView(project, 4, { state: "queued", iteration: 0 }), "implement", `${project}#4:1:0`);
    const pressure = [{ resource: "memory", value: 300 * 1024 ** 2, limit: 1024 ** 3 }];
    const held = await call(runner, "claim", { waitMs: 0, projects: [project], pressure });
    expect(held.status).toBe(204);
    const row = async () =>
      await env.DB.prepare("SELECT pressure, pressure_since AS since FROM runners WHERE id = ?")
        .bind(runner.runnerId)
        .first<{ pressure: string | null; since: number | null }>();
    const first = await row();
    expect(JSON.parse(first?.pressure ?? "null")).toEqual(pressure);
    expect(first?.since).toBeGreaterThan(Date.now() - 60_000);
    // The runners page says why it claims nothing.
    const text = await (await page("/dashboard/runners", await sessionCookie())).text();
    expect(text).toContain("holding back");
    expect(text).toContain("memory 0.3 GiB available (needs 1.0 GiB)");
    // Still holding back, on other figures: since stays when it began.
    const worse = [
      { ...pressure[0], value: 100 * 1024 ** 2 },
      { resource: "load", value: 5, limit: 3 },
    ];
    expect((await call(runner, "claim", { waitMs: 0, projects: [project], pressure: worse })).status).toBe(
      204,
    );
    expect(await row()).toEqual({ pressure: JSON.stringify(worse), since: first?.since });
    // A malformed reason is refused at the boundary, and changes nothing.
    const bad = [{ resource: "swap", value: 1, limit: 2 }];
    expect((await call(runner, "claim", { waitMs: 0, projects: [project], pressure: bad })).status).toBe(400);
    // Recovered: its claim carries no pressure, takes the job, and the record clears.
    const claimed = await claim(runner, [project]);
    expect(claimed?.job.issue.number).toBe(4);
    expect(await row()).toEqual({ pressure: null, since: null });
  });

  it("shows how each runner runs sessions, as it said at registration and says with every claim", async () => {
    const runner = await newRunner("unsafe");
    const sandboxOf = async () => {
      const res = await SELF.fetch(`${BASE}/api/v1/runners`, { headers: OPERATOR });
      const { runners } = (await res.json()) as { runners: { id: string; sandbox: string | null }[] };
      return runners.find((r) => r.id === runner.runnerId)?.sandbox;
    };
    // An older runner says nothing: unknown.
    expect(await sandboxOf()).toBeNull();
    const project = freshProject("sandbox");
    const claimAs = (sandbox: string) => call(runner, "claim", { waitMs: 0, projects: [project], sandbox });
    expect((await claimAs("none")).status).toBe(204);
    expect(await sandboxOf()).toBe("none");
    expect((await claimAs("bubblewrap")).status).toBe(204);
    expect(await sandboxOf()).toBe("bubblewrap");
    const bad = await claimAs("chroot");
    expect(bad.status).toBe(400);
    expect(await sandboxOf()).toBe("bubblewrap");

    const { token } = await registrationToken();
    const registered = await call(null, "register", {
      registrationToken: token,
      name: "u2",
      version: "1",
      sandbox: "none",
    });
    const { runnerId } = (await registered.json()) as { runnerId: string };
    const runnersPage = await page("/dashboard/runners", await sessionCookie());
    expect(await runnersPage.text()).toContain("OFF (--unsafe-no-sandbox)");
    const stored = await env.DB.prepare("SELECT sandbox FROM runners WHERE id = ?").bind(runnerId).first();
    expect(stored).toEqual({ sandbox: "none" });
  });
});

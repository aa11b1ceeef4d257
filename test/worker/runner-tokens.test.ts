import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { alertStub } from "../../src/alert-stub.ts";
import type { HealthFinding } from "../../src/contracts/project-object.ts";
import { sha256Hex } from "../../src/crypto/tokens.ts";
import { DEFAULT_TOKEN_TTL_SECONDS } from "../../src/domain/runner-tokens.ts";
import { rotateResponse, TOKEN_ROTATE_HEADER } from "../../src/runner-api/contract.ts";
import { formFields, page, post, sessionCookie } from "./dashboard-support.ts";
import {
  call,
  claim,
  enqueue,
  heartbeat,
  issueView,
  jobsOf,
  newRunner,
  type Runner,
  registrationToken,
  setup,
  taken,
} from "./support/jobs.ts";
import { control, loopProject } from "./support/review.ts";
import { freshProject, OPERATOR } from "./support/webhooks.ts";

const BASE = "https://conveyor.test";
/** Claims name a project without jobs: D1 and the queues are shared with other tests. */
const IDLE = freshProject("idle");
const poll = (runner: Runner, extra: object = {}) =>
  call(runner, "claim", { waitMs: 0, projects: [IDLE], ...extra });
const TTL_MS = DEFAULT_TOKEN_TTL_SECONDS * 1000;

const revoke = (id: string) =>
  SELF.fetch(`${BASE}/api/v1/runners/${id}`, { method: "DELETE", headers: OPERATOR });

const listed = async (id: string) => {
  const res = await SELF.fetch(`${BASE}/api/v1/runners`, { headers: OPERATOR });
  const { runners } = (await res.json()) as { runners: { id: string; sandbox: string | null }[] };
  return runners.find((r) => r.id === id);
};

async function implementJob(project: string, number: number) {
  await enqueue(
    issueView(project, number, { state: "queued", iteration: 0 }),
    "implement",
    `${project}#${number}`,
  );
}

/** Sets what D1 holds for the runner's current token's expiry. */
const expireAt = (runner: Runner, at: number) =>
  env.DB.prepare("UPDATE runners SET token_expires_at = ? WHERE id = ?").bind(at, runner.runnerId).run();

describe("revocation", () => {
  it("a revoked runner's every call answers 401, and its job is requeued for another runner at once", async () => {
    const { project, runners } = await setup("revoke");
    const [revoked, other] = runners as [Runner, Runner];
    await implementJob(project, 1);
    const claimed = taken(await claim(revoked, [project]));
    // Confirmed: the attempt began, so losing it costs one.
    await heartbeat(revoked, claimed);

    expect((await revoke(revoked.runnerId)).status).toBe(204);

    const lease = { leaseToken: claimed.leaseToken };
    for (const [path, body] of [
      ["claim", { waitMs: 0, projects: [project] }],
      [`jobs/${claimed.job.id}/heartbeat`, lease],
      [`jobs/${claimed.job.id}/complete`, { ...lease, phase: "awaiting_ci" }],
      [`jobs/${claimed.job.id}/fail`, { ...lease, error: "x", retryable: true }],
      ["rotate", {}],
    ] as const) {
      const res = await call(revoked, path, body);
      expect([path, res.status, await res.json()]).toEqual([path, 401, { error: "unknown runner token" }]);
    }
    // No lease expiry and no grace period for a runner that never comes back.
    const next = taken(await claim(other, [project]));
    expect([next.job.id, next.job.attempt]).toEqual([claimed.job.id, 2]);
    expect(await listed(revoked.runnerId)).toBeUndefined();
    expect((await revoke(revoked.runnerId)).status).toBe(404);
    const bad = await revoke("not-a-runner");
    expect([bad.status, await bad.json()]).toEqual([400, { error: "not a runner id (runner-<16 hex>)" }]);
  });

  it("the dashboard's revoke button needs the CSRF token, then revokes", async () => {
    const runner = await newRunner("dash-revoke");
    const cookie = await sessionCookie();
    const path = `/dashboard/runners/${runner.runnerId}/revoke`;
    const html = await (await page("/dashboard/runners", cookie)).text();
    const fields = formFields(html, path);

    expect((await post(path, cookie, { csrf: "forged" })).status).toBe(403);
    expect((await poll(runner)).status).toBe(204);

    const done = await post(path, cookie, fields);
    expect([done.status, done.headers.get("location")]).toEqual([303, "/dashboard/runners"]);
    expect(done.headers.get("set-cookie")).toContain(encodeURIComponent(`Revoked ${runner.runnerId}`));
    expect((await poll(runner)).status).toBe(401);
  });
});

describe("expiry and rotation", () => {
  it("an expired token → 401", async () => {
    const runner = await newRunner("expired");
    await expireAt(runner, Date.now() - 1);
    const res = await poll(runner);
    expect([res.status, await res.json()]).toEqual([
      401,
      { error: "runner token expired: register the runner again" },
    ]);
  });

  it("a runner's token lasts the TTL and is not due for rotation while fresh", async () => {
    const before = Date.now();
    const runner = await newRunner("fresh");
    const row = await env.DB.prepare("SELECT token_expires_at AS at FROM runners WHERE id = ?")
      .bind(runner.runnerId)
      .first<{ at: number }>();
    expect(row?.at).toBeGreaterThanOrEqual(before + TTL_MS);
    const res = await poll(runner);
    expect([res.status, res.headers.get(TOKEN_ROTATE_HEADER)]).toEqual([204, null]);
  });

  it("rotation keeps a runner working across its old token's expiry; the old token dies at the new one's first use", async () => {
    const { project, runners } = await setup("rotate", {}, 1);
    const [runner] = runners as [Runner];
    await expireAt(runner, Date.now() + TTL_MS / 2 - 60_000);

    const asked = await poll(runner);
    expect([asked.status, asked.headers.get(TOKEN_ROTATE_HEADER)]).toEqual([204, "due"]);
    const rotated = await call(runner, "rotate", {});
    expect(rotated.status).toBe(201);
    const next = rotateResponse.parse(await rotated.json());
    expect(next.token).toMatch(/^cvr_[0-9a-f]{64}$/);
    expect(next.expiresAt).toBeGreaterThanOrEqual(Date.now() + TTL_MS - 60_000);

    // Until the new token is used, the old one still works (the answer may have been lost).
    expect((await poll(runner)).status).toBe(204);

    const renewed = { ...runner, token: next.token };
    await implementJob(project, 1);
    const fresh = await call(renewed, "claim", { waitMs: 0, projects: [project] });
    expect([fresh.status, fresh.headers.get(TOKEN_ROTATE_HEADER)]).toEqual([200, null]);
    const old = await poll(runner);
    expect(old.status).toBe(401);
    expect(((await old.json()) as { error: string }).error).toMatch(/^runner token superseded: /);

    // Past the old token's expiry the runner goes on with the new one.
    await expireAt(renewed, next.expiresAt);
    const stored = await env.DB.prepare("SELECT token_hash FROM runners WHERE id = ?")
      .bind(runner.runnerId)
      .first<{ token_hash: string }>();
    expect(stored?.token_hash).toBe(await sha256Hex(next.token));
    expect((await poll(renewed)).status).toBe(204);
  });
});

describe("a stolen token", () => {
  /** A runner call from `address`, as Cloudflare says it (CF-Connecting-IP). */
  const from = (address: string, token: string, path: string, body: object) =>
    SELF.fetch(`${BASE}/runner/v1/${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "cf-connecting-ip": address,
      },
      body: JSON.stringify(body),
    });
  const HOME = "198.51.100.7";
  const THIEF = "203.0.113.9";

  it("rotated from a new address is reported, and the real runner's next call hears its token was superseded", async () => {
    const loop = await loopProject("stolen", { supervisor: { runnerSilentMs: 60 * 60_000 } });
    const victim = await newRunner("victim", { projects: [loop.project] });
    const careful = await newRunner("careful", { projects: [loop.project] });
    const idle = { waitMs: 0, projects: [loop.project] };
    expect((await from(HOME, victim.token, "claim", idle)).status).toBe(204);
    expect((await from(HOME, careful.token, "claim", idle)).status).toBe(204);

    // The thief rotates the victim's token from elsewhere and uses the new one: the old one is void.
    const rotated = await from(THIEF, victim.token, "rotate", {});
    expect(rotated.status).toBe(201);
    const { token: stolen } = rotateResponse.parse(await rotated.json());
    expect((await from(THIEF, stolen, "claim", idle)).status).toBe(204);
    // A rotation from the runner's own address is nothing to report.
    const own = rotateResponse.parse(await (await from(HOME, careful.token, "rotate", {})).json());
    expect((await from(HOME, own.token, "claim", idle)).status).toBe(204);

    const locked = await from(HOME, victim.token, "claim", idle);
    expect(locked.status).toBe(401);
    const { error } = (await locked.json()) as { error: string };
    expect(error).toMatch(
      new RegExp(
        `^runner token superseded: runner ${victim.runnerId} rotated its token at \\S+ and uses the new one; if this runner did not rotate it, its token was stolen: have the operator revoke ${victim.runnerId}`,
      ),
    );

    const health = await SELF.fetch(`${BASE}/api/v1/projects/${loop.project}/health/check`, {
      method: "POST",
      headers: OPERATOR,
    });
    const { findings } = (await health.json()) as { findings: HealthFinding[] };
    expect(findings.map((f) => [f.check, f.subject, f.priority])).toEqual([
      ["token_rotated", "runner victim", "P1"],
    ]);
    expect(findings[0]?.summary).toContain("and its replaced token was presented since");
    expect(findings[0]?.detail).toMatch(
      new RegExp(`^rotated from ${THIEF}; seen before at ${HOME}; the replaced`),
    );
    // A runner's finding goes to the operator's channel (docs/supervisor.md), not the project's forge; the
    // dashboard shows the addresses.
    await alertStub(env).drain();
    const told = (
      await control<{ conveyor: { alert: { key: string; priority: string } } }[]>("alerts-received")
    )
      .map((m) => m.conveyor.alert)
      .filter((alert) => alert.key.startsWith(`token_rotated:${victim.runnerId}:`));
    expect(told.map((alert) => alert.priority)).toEqual(["P1"]);
    expect(await loop.forge.listIssuesByLabel("supervisor", "all")).toEqual([]);
    const html = await (await page("/dashboard/runners", await sessionCookie())).text();
    expect(html).toContain(`from ${THIEF} (seen before at ${HOME})`);
  });
});

describe("project-bound runners", () => {
  it("claim only their projects' jobs, whatever they ask for", async () => {
    const { project: mine } = await setup("bound-mine", {}, 0);
    const { project: theirs } = await setup("bound-theirs", {}, 0);
    const bound = await newRunner("bound", { projects: [mine] });
    await implementJob(theirs, 1);
    await implementJob(mine, 2);

    expect(await claim(bound, [theirs])).toBeNull();
    const res = await call(bound, "claim", { waitMs: 0 });
    const first = (await res.json()) as { job: { project: string } };
    expect(first.job.project).toBe(mine);
    expect(await claim(bound, [theirs, mine])).toBeNull();
    expect((await call(bound, "claim", { waitMs: 0 })).status).toBe(204);
    expect((await jobsOf(theirs)).map((job) => job.status)).toEqual(["queued"]);
  });

  it("a registration token names valid projects", async () => {
    for (const projects of [[], ["Not A Project"], "demo"]) {
      const res = await SELF.fetch(`${BASE}/api/v1/runners/tokens`, {
        method: "POST",
        headers: OPERATOR,
        body: JSON.stringify({ projects }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^projects/);
    }
    const token = await registrationToken({ projects: ["a-1", "a-1", "b-2"] });
    expect(token).toMatchObject({ projects: ["a-1", "b-2"] });
  });
});

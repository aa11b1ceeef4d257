/**
 * 100 projects × 50 live issues reconciled at once on the local Worker: one quiet cycle's latency per project
 * (each project's own ProjectDO, all started together), and what the cron invocation that arms them costs in
 * subrequests (a D1 read and one Durable Object call per project).
 */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { armReconciliation } from "../../../src/cron/reconcile.ts";
import type { Env } from "../../../src/env.ts";
import { projectStub } from "../../../src/project-stub.ts";
import { cycle } from "../support/reconcile.ts";
import { loopProject } from "../support/review.ts";

const PROJECTS = 100;
const LIVE = 50;
const STATES = ["blocked", "queued", "awaiting_review", "revising", "escalated"];

const emit = (figure: object) => console.log(JSON.stringify(figure));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

/** The Worker's env with its D1 statements and Durable Object calls counted: the invocation's subrequests. */
function counted(): { env: Env; subrequests: () => number } {
  let count = 0;
  const db = new Proxy(env.DB, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key !== "prepare" && key !== "batch")
        return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        if (key === "batch") count++;
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        // A prepared statement is one subrequest when it runs; drizzle runs each one it prepares.
        if (key === "prepare") count++;
        return result;
      };
    },
  });
  const projects = new Proxy(env.PROJECTS, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key !== "get") return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        count++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { env: { ...env, DB: db, PROJECTS: projects }, subrequests: () => count };
}

it("reconciles 100 projects of 50 live issues each at once", async () => {
  const loops = [];
  for (let i = 0; i < PROJECTS; i++) loops.push(await loopProject(`scale-${i}`));
  const now = Date.now();
  for (const loop of loops) {
    await env.DB.batch(
      Array.from({ length: LIVE }, (_, n) =>
        env.DB.prepare(
          "INSERT INTO issues (project_id, number, state, iteration, seq, updated_at) VALUES (?, ?, ?, 1, 1, ?)",
        ).bind(loop.project, 1000 + n, STATES[n % STATES.length] ?? "queued", now),
      ),
    );
  }
  // Two cycles each: the first looks back, the second keeps the listing's ETag; from then on cycles are quiet.
  await Promise.all(loops.map((loop) => cycle(loop).then(() => cycle(loop))));

  const latencies = await Promise.all(
    loops.map(async (loop) => {
      const started = performance.now();
      const outcome = await projectStub(env, loop.project).reconcileNow(loop.project);
      expect(outcome).toMatchObject({ changed: 0, calls: 0 });
      return performance.now() - started;
    }),
  );
  const sorted = [...latencies].sort((a, b) => a - b);
  emit({ name: "reconcile_cycle_p50_100_projects", value: percentile(sorted, 50), unit: "ms" });
  emit({ name: "reconcile_cycle_p99_100_projects", value: percentile(sorted, 99), unit: "ms" });

  const meter = counted();
  const armed = await armReconciliation(meter.env);
  expect(armed.filter((r) => r.error)).toEqual([]);
  emit({
    name: "cron_invocation_subrequests",
    value: meter.subrequests(),
    unit: `subrequests for ${armed.length} registered projects`,
    target: "<= projects + 1, far under 1000",
  });
  expect(meter.subrequests()).toBeLessThanOrEqual(armed.length + 1);
}, 600_000);

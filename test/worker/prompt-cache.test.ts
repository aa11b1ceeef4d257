/**
 * The prompt-cache lifetime a project's jobs carry: `auto` reads the project's recent CI waits from D1's
 * history (an hour when CI usually takes 4 minutes or more), an explicit setting stands as it is.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { projectCacheTtl, recentCiWaitsMs } from "../../src/projects/prompt-cache.ts";
import { loadProject } from "../../src/projects/store.ts";
import { type Edge, issueHistory } from "../support/outcome-history.ts";
import { claim, seedForgeIssue, setup, taken, triaged } from "./support/jobs.ts";

const MINUTE = 60_000;

/** An issue whose CI took `ciMs`, red then green, `at` ago. */
const withCi = (ciMs: number): Edge[] => [
  ["triage", "queued", 0],
  ["dispatched", "running", MINUTE],
  ["phase", "awaiting_ci", 10 * MINUTE],
  ["ci", "revising", ciMs],
  ["dispatched", "revising", MINUTE],
  ["phase", "awaiting_ci", 5 * MINUTE],
  ["ci", "awaiting_review", ciMs],
];

async function seedHistory(project: string, ciMs: number[]) {
  const start = Date.now() - 24 * 60 * MINUTE;
  const rows = ciMs.flatMap((ms, i) => issueHistory(project, 100 + i, start, withCi(ms)).transitions);
  await env.DB.batch(
    rows.map((row) =>
      env.DB.prepare(
        `INSERT INTO transitions (${Object.keys(row).join(", ")}) VALUES (${Object.keys(row)
          .map(() => "?")
          .join(", ")})`,
      ).bind(...Object.values(row)),
    ),
  );
}

describe("the prompt cache's lifetime", () => {
  it("is an hour for the jobs of a project whose CI takes longer than the 5-minute cache", async () => {
    const { project, runners } = await setup("cache-slow-ci", {}, 1);
    await seedHistory(project, [6 * MINUTE, 9 * MINUTE, 2 * MINUTE]);
    expect((await recentCiWaitsMs(env, project, Date.now())).sort((a, b) => a - b)).toEqual([
      2 * MINUTE,
      2 * MINUTE,
      6 * MINUTE,
      6 * MINUTE,
      9 * MINUTE,
      9 * MINUTE,
    ]);
    await seedForgeIssue(project, 7, "Add --verbose", "Print each step.");
    await triaged(project, 7);
    const [runner] = runners;
    if (!runner) throw new Error("no runner");
    expect(taken(await claim(runner, [project])).job.promptCacheTtl).toBe("1h");
  });

  it("stays at 5 minutes where CI is quick, where there is no history yet, and where the setting says so", async () => {
    const { project: quick } = await setup("cache-quick-ci", {}, 0);
    await seedHistory(quick, [MINUTE, 2 * MINUTE, 5 * MINUTE]);
    const { project: fresh } = await setup("cache-no-ci", {}, 0);
    const { project: pinned } = await setup("cache-pinned", { promptCache: "5m" }, 0);
    await seedHistory(pinned, [10 * MINUTE, 10 * MINUTE, 10 * MINUTE]);
    for (const id of [quick, fresh, pinned]) {
      const project = await loadProject(env, id);
      if (!project) throw new Error(`no project ${id}`);
      expect(await projectCacheTtl(env, project)).toBe("5m");
    }
  });
});

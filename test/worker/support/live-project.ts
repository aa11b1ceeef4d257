/**
 * A project with many live issues, as reconciliation finds it in steady state: open dependencies on the forge,
 * backlog issues blocked on them, and issues in flight (some waiting for CI on a real commit). The forge holds
 * the issues; D1 holds the mirror and the lifecycle index, as webhooks and IssueDO flushes would have left them.
 */
import { env } from "cloudflare:test";
import { toMirrored } from "../../../src/projects/gate.ts";
import { mirrorIssue } from "../../../src/projects/mirror.ts";
import { loadProject } from "../../../src/projects/store.ts";
import { control, type Loop, loopProject } from "./review.ts";

export type LiveProject = Loop & {
  deps: number[];
  blocked: number[];
  inFlight: number[];
  awaitingCi: number[];
};

/** Counts of the forge requests made about the loop's repository: charged, and answered 304. */
export const apiCalls = (loop: Loop) =>
  control<{ charged: number; notModified: number }>("api-calls", { repo: loop.repo });

export async function liveProject(
  name: string,
  { deps = 100, inFlight = 100, awaitingCi = 20 } = {},
  settings: object = {},
): Promise<LiveProject> {
  // The tests run the cycles themselves: the project's own first one (a period after registration) must not
  // triage the backlog while a slow setup (a loaded machine) is still writing the index below.
  const loop = await loopProject(name, { reconcile: { periodMs: 60 * 60_000 }, ...settings });
  const project = await loadProject(env, loop.project);
  if (!project) throw new Error("not registered");
  await loop.forge.ensureLabels(["backlog", "in-progress"]);
  // Each group's issues are created at once (the forge numbers them in arrival order; nothing here needs them
  // in a particular order): a serial setup of 300 issues took most of the test's time.
  const create = (count: number, issue: (i: number) => { title: string; body: string; labels: string[] }) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => (await loop.forge.createIssue(issue(i))).number),
    );
  const depsCreated = await create(deps, (i) => ({ title: `Dependency ${i}`, body: "", labels: [] }));
  const created = {
    deps: depsCreated,
    blocked: await create(depsCreated.length, (i) => ({
      title: `After ${depsCreated[i]}`,
      body: `## Depends on\n- #${depsCreated[i]}\n`,
      labels: ["backlog"],
    })),
    inFlight: await create(inFlight, (i) => ({ title: `In flight ${i}`, body: "", labels: ["in-progress"] })),
  };
  await Promise.all(
    [...created.deps, ...created.blocked, ...created.inFlight].map(async (number) =>
      mirrorIssue(env, loop.project, toMirrored(project, await loop.forge.getIssue(number))),
    ),
  );
  const awaiting = created.inFlight.slice(0, awaitingCi);
  // Each waits on its own branch's head, as a session's push leaves it. Pushes to different branches at once,
  // as sessions make them: one after another they were half of a reconciliation test's time.
  const heads = new Map(
    await Promise.all(
      awaiting.map(async (number) => {
        const pushed = await control<{ sha: string }>("push", {
          repo: loop.repo,
          branch: `conveyor/${number}`,
          files: { "work.txt": `${number}\n` },
        });
        return [number, pushed.sha] as const;
      }),
    ),
  );
  const now = Date.now();
  const row = (number: number, state: string, headSha: string | null) =>
    env.DB.prepare(
      `INSERT INTO issues (project_id, number, state, iteration, seq, head_sha, updated_at)
       VALUES (?, ?, ?, 1, 1, ?, ?)`,
    ).bind(loop.project, number, state, headSha, now);
  await env.DB.batch([
    ...created.blocked.map((n) => row(n, "blocked", null)),
    ...created.inFlight.map((n) =>
      heads.has(n) ? row(n, "awaiting_ci", heads.get(n) ?? null) : row(n, "awaiting_review", null),
    ),
  ]);
  return { ...loop, ...created, awaitingCi: awaiting };
}

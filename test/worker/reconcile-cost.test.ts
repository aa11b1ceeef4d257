import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { reconcileProject } from "../../src/cron/reconcile.ts";
import { loadProject } from "../../src/projects/store.ts";
import { apiCalls, liveProject } from "./support/live-project.ts";

it("baseline: forge calls of one quiet cycle of the global loop", async () => {
  const live = await liveProject("cost-baseline", { deps: 98, inFlight: 102 });
  const project = await loadProject(env, live.project);
  if (!project) throw new Error("not registered");
  await reconcileProject(env, project);
  const before = await apiCalls(live);
  await reconcileProject(env, project);
  const after = await apiCalls(live);
  console.log(
    JSON.stringify({
      baseline: after.charged - before.charged,
      notModified: after.notModified - before.notModified,
    }),
  );
  expect(after.charged).toBeGreaterThan(before.charged);
}, 240_000);

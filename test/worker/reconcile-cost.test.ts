/**
 * What one reconciliation cycle costs on the forge, counted by the local forge itself: charged requests, and
 * conditional ones it answered 304 (free on GitHub's rate limit). Prints the figures as `npm run bench` does.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BOUNDARY_SETTLE_MS } from "../../src/domain/reconciliation.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { apiCalls, liveProject } from "./support/live-project.ts";
import { cycle } from "./support/reconcile.ts";
import type { Loop } from "./support/review.ts";

/**
 * The global loop's charged calls for one quiet cycle on the same data, measured before it was replaced
 * (200 live issues; 98 open dependencies, as at 100 it failed on D1's limit of bound parameters).
 */
const GLOBAL_LOOP_QUIET_CALLS = 202;

const emit = (figure: object) => console.log(JSON.stringify(figure));

/** The charged and free calls one cycle made, as the forge counted them and as the cycle metered them. */
async function measured(loop: Loop) {
  const before = await apiCalls(loop);
  const outcome = await cycle(loop);
  const after = await apiCalls(loop);
  return {
    outcome,
    charged: after.charged - before.charged,
    notModified: after.notModified - before.notModified,
  };
}

describe("reconciliation's forge cost", () => {
  it("a quiet cycle with 200 live issues and 100 open dependencies: one free listing, free CI reads", async () => {
    const live = await liveProject("cost-quiet");
    // Cycles run a period apart: by the first, the forge's clock is past the second the setup ended in. The
    // first cycle reads everything once and closes that second; the second lists from after it and keeps the
    // listing's ETag.
    await new Promise((r) => setTimeout(r, BOUNDARY_SETTLE_MS + 1_000));
    await cycle(live);
    await cycle(live);
    const quiet = await measured(live);
    emit({
      name: "reconcile_forge_calls_quiet",
      value: quiet.charged,
      unit: "charged forge calls per cycle",
      target: "<= 2",
      baseline: GLOBAL_LOOP_QUIET_CALLS,
      notModified: quiet.notModified,
    });
    expect(quiet.charged).toBeLessThanOrEqual(2);
    // The listing and the 20 awaiting_ci issues' CI reads were asked, and answered 304.
    expect(quiet.notModified).toBeGreaterThanOrEqual(1 + live.awaitingCi.length);
    // The cycle's own meter agrees with the forge: 304s are not counted against the budget.
    expect(quiet.outcome).toMatchObject({ calls: quiet.charged, notModified: quiet.notModified, changed: 0 });

    // Changes: a dependency closed, a new backlog issue by a writer.
    const before = await apiCalls(live);
    const [dep] = live.deps;
    if (dep === undefined) throw new Error("no dependency");
    await live.forge.closeIssue(dep);
    const { number } = await live.forge.createIssue({ title: "New work", body: "", labels: ["backlog"] });
    const afterChanges = await apiCalls(live);
    const changed = await measured(live);
    expect(changed.outcome).toMatchObject({ changed: 2, dispatched: 1, regated: 1 });
    // The cycle after a change lists once more from the new boundary (a new URL: no ETag yet).
    const settling = await measured(live);
    // The cycles' own meters: the forge's count of these windows also holds the effects the changes set off
    // (the new issue's labels), which land whenever their outbox gets to them.
    const perChange = (changed.outcome.calls + settling.outcome.calls) / changed.outcome.changed;
    emit({
      name: "reconcile_forge_calls_per_change",
      value: perChange,
      unit: "charged forge calls per changed issue (its cycle and the next)",
      target: "<= 3",
    });
    expect(perChange).toBeLessThanOrEqual(3);
    expect(afterChanges.charged - before.charged).toBeGreaterThan(0);
    expect((await issueStub(env, live.project, number).view())?.state).toBeDefined();
  }, 240_000);
});

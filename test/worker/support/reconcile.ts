import { env } from "cloudflare:test";
import type { BackfillStatus, CycleOutcome } from "../../../src/contracts/project-object.ts";
import { projectStub } from "../../../src/project-stub.ts";

/** One reconciliation cycle run now by the project's own Durable Object; a failed cycle throws. */
export async function cycle(loop: { project: string }): Promise<Extract<CycleOutcome, { changed: number }>> {
  const outcome = await projectStub(env, loop.project).reconcileNow(loop.project);
  if (!outcome || "error" in outcome) throw new Error(`cycle failed: ${outcome?.error ?? "not run"}`);
  return outcome;
}

/** Steps the project's backfill (started by its registration) until it is done; waiting on the forge throws. */
export async function backfilled(project: string): Promise<BackfillStatus> {
  for (let step = 0; step < 50; step++) {
    const status = await projectStub(env, project).backfillMirror(project, { step: true });
    if (status.phase === "done") return status;
    if (status.phase !== "running") throw new Error(`backfill ${status.phase}: ${status.reason}`);
  }
  throw new Error("backfill did not end in 50 steps");
}

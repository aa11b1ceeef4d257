import { env } from "cloudflare:test";
import type { CycleOutcome } from "../../../src/contracts/project-object.ts";
import { projectStub } from "../../../src/project-stub.ts";

/** One reconciliation cycle run now by the project's own Durable Object; a failed cycle throws. */
export async function cycle(loop: { project: string }): Promise<Extract<CycleOutcome, { changed: number }>> {
  const outcome = await projectStub(env, loop.project).reconcileNow(loop.project);
  if (!outcome || "error" in outcome) throw new Error(`cycle failed: ${outcome?.error ?? "not run"}`);
  return outcome;
}

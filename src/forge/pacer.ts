/**
 * The writer's side of a forge token's pacer (durable-objects/pacer/): before each write, one call to the
 * token's object, which counts it and says when it may go. A short wait is waited here; a longer one is
 * thrown as `ForgePacingWait`, so an effect is put back in its outbox until then (not counted as a failed
 * attempt) instead of holding its object.
 */
import type { PacerObject } from "../contracts/pacer-object.ts";
import { sha256Hex } from "../crypto/tokens.ts";
import { GITHUB_PACING, type PacingLimits } from "../domain/forge-pacing.ts";
import type { Env } from "../env.ts";
import type { Project } from "../projects/store.ts";
import type { WritePacer } from "./client/http.ts";

/** The longest a writer waits in place for its turn; beyond it, it comes back at its turn. */
export const PACER_MAX_WAIT_MS = 5_000;

/** The limits a project's writes keep: its setting, else GitHub's documented ones for GitHub; none else. */
export function pacingOf(project: Project): PacingLimits | null {
  return project.settings.forgePacing ?? (project.forge === "github" ? GITHUB_PACING : null);
}

/** The pacer shared by every writer holding `token` at `apiUrl`; named by their hash, never the token. */
export function tokenPacer(env: Env, apiUrl: string, token: string, limits: PacingLimits): WritePacer {
  let stub: Promise<DurableObjectStub<PacerObject>> | undefined;
  const pacer = () => {
    stub ??= sha256Hex(`${apiUrl}\n${token}`).then((hash) => env.PACERS.get(env.PACERS.idFromName(hash)));
    return stub;
  };
  return {
    async beforeWrite(kind) {
      const stub = await pacer();
      const answer = await stub.acquire(kind, limits, PACER_MAX_WAIT_MS);
      if ("retryAt" in answer) return { retryAt: answer.retryAt };
      const wait = answer.at - Date.now();
      if (wait <= 0) return null;
      await new Promise((resolve) => setTimeout(resolve, wait));
      // The forge may have refused another writer meanwhile: its wait holds for this turn too.
      const blocked = await stub.blockedUntil();
      return blocked > 0 ? { retryAt: blocked } : null;
    },
    async refused(until) {
      await (await pacer()).block(until);
    },
  };
}

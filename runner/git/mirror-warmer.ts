import type { Logger } from "../log.ts";
import type { Workspace } from "./workspace.ts";

/**
 * How often the private repositories are fetched between claims. A fetch with nothing new is one negotiation
 * with the forge; once a minute per repository and runner is far within what a forge serves.
 */
export const MIRROR_REFRESH_MS = 60_000;

/**
 * Keeps the private repositories this runner has served fetched ahead of claims, so that a claim's own fetch
 * (which still runs: a session starts from the base as the forge has it then) brings only what landed since
 * the last refresh, and stays within the time Claude Code takes to start beside it (runner/job.ts). Runs
 * until `signal` aborts; a refresh that fails is logged and tried again at the next.
 */
export function warmMirrors(
  workspace: Workspace,
  log: Logger,
  signal: AbortSignal,
  intervalMs = MIRROR_REFRESH_MS,
): void {
  let refreshing = false;
  const timer = setInterval(() => {
    if (refreshing) return;
    refreshing = true;
    void refreshMirrors(workspace, log).finally(() => {
      refreshing = false;
    });
  }, intervalMs);
  // Nothing to wait for at a stop: a claim's own fetch is what a job relies on.
  timer.unref();
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}

/** Fetches every private repository this process knows, one after the other; never rejects. */
export async function refreshMirrors(workspace: Workspace, log: Logger): Promise<void> {
  for (const mirror of workspace.knownMirrors()) {
    await workspace.ensureMirror(mirror).then(
      () => log.debug("mirror refreshed", { repo: mirror.repoKey }),
      (error: unknown) => log.warn("could not refresh a mirror", { repo: mirror.repoKey, error }),
    );
  }
}

/** The checks of a project known to pass on re-run: a re-run of one passed within the window (D1, `ci_reruns`). */
import { FLAKY_WINDOW_MS } from "../domain/ci-rerun.ts";
import type { Env } from "../env.ts";

const PASSED_ON_RERUN = `SELECT DISTINCT check_name AS name FROM ci_reruns
  WHERE project_id = ? AND requested_at >= ? AND result = 'passed'`;

export async function flakyChecks(env: Env, projectId: string, now: number): Promise<Set<string>> {
  const { results } = await env.DB.prepare(PASSED_ON_RERUN)
    .bind(projectId, now - FLAKY_WINDOW_MS)
    .all<{ name: string }>();
  return new Set(results.map((row) => row.name));
}

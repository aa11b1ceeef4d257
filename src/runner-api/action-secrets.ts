/**
 * An action job's secrets, added to its claim on the way out: opened from the project's sealed secrets at
 * claim time (never kept in the job queue), and only those its formula declares. The runner gives each step
 * its own share (runner/actions/action-tools.ts). The one D1 read after a lease is taken: should it fail,
 * the runner gets no answer and the lease, never confirmed, goes back to the queue after `jobs.confirmMs`.
 */
import type { Env } from "../env.ts";
import { loadSecrets } from "../projects/store.ts";
import type { Claim } from "./contract.ts";

export async function withActionSecrets(env: Env, claim: Claim): Promise<Claim> {
  const { action } = claim.job;
  if (!action) return claim;
  const stored = (await loadSecrets(env, claim.job.project))?.actionSecrets ?? {};
  const secrets: Record<string, string> = {};
  for (const name of action.formula.secrets) {
    const value = Object.hasOwn(stored, name) ? stored[name] : undefined;
    if (value !== undefined) secrets[name] = value;
  }
  return { ...claim, job: { ...claim.job, action: { ...action, secrets } } };
}

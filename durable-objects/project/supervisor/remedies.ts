/**
 * The supervisor's safe remedies (docs/supervisor.md#remedies), applied by durable-objects/project/supervisor/supervisor.ts to
 * the findings of a check.
 */
import type { Finding } from "../../../src/domain/supervisor.ts";
import type { Env } from "../../../src/env.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { issueStub } from "../../../src/issue-stub.ts";
import { log } from "../../../src/log.ts";
import type { Project } from "../../../src/projects/store.ts";
import { jobRequest } from "../../shared/job-request.ts";
import type { SupervisorHooks } from "./supervisor.ts";

/**
 * The safe remedies: an issue past its state's time limit has its Durable Object re-arm its alarm and deliver
 * what is due, which fires the overdue timer; a left-over worktree gets a reap job. Each is best effort. The
 * keys of the findings a remedy settled for good (a reap queued now) come back: those are not reported. One
 * it tried before (the same reap, failed since) is, like every finding a remedy cannot settle.
 */
export async function applyRemedies(
  env: Env,
  project: Project,
  findings: readonly Finding[],
  hooks: SupervisorHooks,
): Promise<Set<string>> {
  const settled = new Set<string>();
  for (const finding of findings) {
    const remedy = finding.remedy;
    if (!remedy) continue;
    try {
      switch (remedy.kind) {
        case "wake_issue":
          await issueStub(env, project.id, remedy.number).drain();
          break;
        case "reap": {
          // One reap per session however often it is found: the queue keeps one job per key.
          const key = `supervisor:reap:${remedy.number}:${remedy.sessionAt}`;
          const request = jobRequest(project, key, {
            kind: "reap",
            number: remedy.number,
            title: "",
            body: "",
            headSha: null,
            iteration: 0,
            sessionId: null,
            instructions: null,
          });
          // Settled when queued now, or still waiting or running from before (its record not in D1 yet); a
          // reap that failed is reported.
          const { jobId, created } = await hooks.enqueue(request);
          if (created || hooks.own().jobs.some((job) => job.id === jobId)) settled.add(finding.key);
          break;
        }
      }
    } catch (error) {
      log.warn("remedy failed", { key: finding.key, error: errorMessage(error) });
    }
  }
  return settled;
}

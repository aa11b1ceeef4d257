/**
 * One agent job on the runner: a fresh worktree of the default branch (a review run's: the pull request's head)
 * never pushed, the agent's own HOME (a review run's context files beside it, read-only), the session with
 * its safe-output tools, and the completion that carries what it asked for. The worktree, the HOME and the
 * context are gone when the run ends: an agent run leaves nothing to resume.
 */
import { rm } from "node:fs/promises";
import type { RequestedOutput } from "../../src/agents/outputs.ts";
import type { Job } from "../../src/runner-api/contract.ts";
import { runsAgents } from "../drivers/driver.ts";
import { prepareAgentHome } from "../drivers/env.ts";
import { DEFAULT_AUTHOR } from "../git/workspace.ts";
import type { JobContext } from "../job.ts";
import type { Logger } from "../log.ts";
import type { Reporter, ReportOutcome } from "../reporter.ts";
import { reviewContextNote, writeReviewContext } from "./review-context.ts";
import type { BacklogReader } from "./safe-outputs.ts";

export type AgentJobRun = {
  reporter: Reporter;
  log: Logger;
  signal: AbortSignal;
  /** The run's `read_backlog` tool: absent for a review, which is about one pull request. */
  readBacklog?: BacklogReader;
};

/** Rejects (the job fails, not retried) for a driver that runs no agents. */
export async function runAgentJob(ctx: JobContext, job: Job, run: AgentJobRun): Promise<ReportOutcome> {
  const { agent } = job;
  if (!agent) throw new Error(`agent job ${job.id} carries no agent run`);
  if (!runsAgents(ctx.driver)) throw new NotAnAgentDriverError();
  const { workspace } = ctx;
  const { reporter, log, signal } = run;
  const repoKey = job.repo.fullName;
  await workspace.ensureMirror({ repoKey, remoteUrl: job.repo.cloneUrl });
  const where = { repoKey, baseBranch: job.repo.defaultBranch, runId: agent.runId };
  const home = ctx.layout.agentRunHome(job.project, agent.runId);
  const context = ctx.layout.agentRunContext(job.project, agent.runId);
  try {
    const worktree = agent.review
      ? await workspace.reviewWorktree({ ...where, ref: agent.review.ref, headSha: agent.review.headSha })
      : await workspace.agentWorktree(where);
    if (agent.review) await writeReviewContext(context, agent.review);
    await prepareAgentHome(home, DEFAULT_AUTHOR);
    log.info("agent run started", { agent: agent.name, run: agent.runId });
    signal.throwIfAborted();
    const result = await ctx.driver.runAgent({
      job,
      agent: agent.review ? { ...agent, prompt: `${agent.prompt}\n\n${reviewContextNote(context)}` } : agent,
      worktree,
      home,
      readOnly: [workspace.objectsPath(repoKey), ...(agent.review ? [context] : [])],
      signal,
      log,
      ...(run.readBacklog && !agent.review && { readBacklog: run.readBacklog }),
      onSession: (sessionId) => void reporter.event({ kind: "session", sessionId, worktree }),
      onUsage: (sessionId, usage) => void reporter.event({ kind: "usage", sessionId, usage }),
      onActivity: (items) => {
        const redacted = items.map((item) => ({ ...item, text: ctx.secrets.redact(item.text) }));
        void reporter.event({ kind: "activity", items: redacted });
      },
    });
    if (signal.reason !== "shutdown") signal.throwIfAborted();
    if (result.error?.retryable) throw new Error(result.error.message);
    // The outputs go to the forge for everyone to read: no secret of the runner's rides along.
    const outputs = result.outputs.map((output) =>
      redactedOutput(output, (text) => ctx.secrets.redact(text)),
    );
    log.info("agent run done", { outputs: outputs.length, error: result.error?.message });
    return {
      phase: result.error ? "failed" : "done",
      ...(result.sessionId && { sessionId: result.sessionId }),
      ...(result.error && { reason: result.error.message }),
      ...(result.usage && { usage: result.usage }),
      outputs,
    };
  } finally {
    await workspace.removeAgentWorktree(repoKey, agent.runId);
    await rm(ctx.layout.agentRunDir(job.project, agent.runId), { recursive: true, force: true });
  }
}

export class NotAnAgentDriverError extends Error {
  constructor() {
    super("this runner's driver runs no agents");
  }
}

/**
 * Every text of the output, however deep (a review's summary and each finding's file and comment too), with
 * the runner's secrets redacted: what goes to the forge is for everyone to read.
 */
export function redactedOutput(output: RequestedOutput, redact: (text: string) => string): RequestedOutput {
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return redact(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, walk(inner)]));
    return value;
  };
  return walk(output) as RequestedOutput;
}

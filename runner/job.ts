import { constants, existsSync } from "node:fs";
import { mkdir, open, readFile, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { parsePhaseFile } from "../src/domain/phase.ts";
import { errorMessage } from "../src/error-message.ts";
import type { BacklogQuery } from "../src/runner-api/backlog-contract.ts";
import { type Claim, issueRef, type Job } from "../src/runner-api/contract.ts";
import type { StepFiring } from "./actions/action-tools.ts";
import { openStepSource } from "./actions/step-source.ts";
import { NotAnAgentDriverError, runAgentJob } from "./agents/run.ts";
import { LeaseLostError, type RunnerApi } from "./api.ts";
import type { Driver } from "./drivers/driver.ts";
import { prepareAgentHome } from "./drivers/env.ts";
import {
  DEFAULT_AUTHOR,
  type IssueRef,
  PushRefusedError,
  PushRejectedError,
  type Workspace,
} from "./git/workspace.ts";
import type { Holdings } from "./holdings.ts";
import { FALLBACK_LEASE_MS, LeaseKeeper } from "./lease.ts";
import type { Logger } from "./log.ts";
import type { WorkDirLayout } from "./paths.ts";
import type { Secrets } from "./redact.ts";
import { Reporter, type ReportOutcome } from "./reporter.ts";

/** Why a job stopped before its end; the abort reason of the job's signal. */
export type StopReason = "cancelled" | "shutdown" | "lease_lost";

export type JobContext = {
  api: RunnerApi;
  workspace: Workspace;
  driver: Driver;
  holdings: Holdings;
  layout: WorkDirLayout;
  log: Logger;
  secrets: Secrets;
};

/**
 * One claimed job from start to report: heartbeats for its whole life, the session in the issue's worktree,
 * the phase it wrote, the push, and exactly one `complete` or `fail` (none once the lease is lost).
 * `shutdown` aborts it when the runner stops; never rejects.
 */
export async function runJob(ctx: JobContext, claim: Claim, shutdown: AbortSignal): Promise<void> {
  const { job, leaseToken } = claim;
  const controller = new AbortController();
  const stop = (reason: StopReason) => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const onShutdown = () => stop("shutdown");
  const reporter = new Reporter({
    api: ctx.api,
    jobId: job.id,
    leaseToken,
    redact: (text) => ctx.secrets.redact(text),
    onLost: () => stop("lease_lost"),
    warn: (message, error) => ctx.log.warn(message, { job: job.id, error }),
    // The lease is kept by its heartbeats meanwhile; a cancelled job's outcome is nobody's concern.
    leaseHeld: () => lease.held && controller.signal.reason !== "cancelled",
  });
  const log = ctx.log.child(
    { job: job.id, project: job.project, issue: job.issue.number, kind: job.kind, attempt: job.attempt },
    (level, message) => reporter.log(level, message),
  );
  const lease = new LeaseKeeper({
    api: ctx.api,
    jobId: job.id,
    leaseToken,
    leaseMs: claim.leaseMs ?? FALLBACK_LEASE_MS,
    log,
    onCancelled: () => stop("cancelled"),
    onLost: () => stop("lease_lost"),
  });

  // A runner cut off from the Worker, or whose job went to another runner, must not push over its successor.
  const beforePush = async () => {
    if (!(await lease.confirm())) stop("lease_lost");
    controller.signal.throwIfAborted();
  };
  // A dangerous step's approval is spent on the Worker before the step runs: at most once over all attempts.
  const fireStep = async (step: string): Promise<StepFiring> => {
    try {
      const answer = await ctx.api.fireStep(job.id, leaseToken, step);
      return answer.fired ? answer : { ...answer, retry: false };
    } catch (error) {
      if (error instanceof LeaseLostError) stop("lease_lost");
      return { fired: false, reason: `Conveyor could not be asked (${errorMessage(error)})`, retry: true };
    }
  };

  // An agent run's read tool: a lost lease stops the run, any other failure is the tool's error to the agent.
  const readBacklog = async (query: BacklogQuery) => {
    try {
      return await ctx.api.backlog(job.id, leaseToken, query);
    } catch (error) {
      if (error instanceof LeaseLostError) stop("lease_lost");
      throw error;
    }
  };

  lease.start();
  shutdown.addEventListener("abort", onShutdown, { once: true });
  if (shutdown.aborted) onShutdown();
  try {
    log.info("job started");
    const signal = controller.signal;
    const outcome =
      job.kind === "reap"
        ? await reap(ctx, job)
        : job.kind === "agent"
          ? await runAgentJob(ctx, job, { reporter, log, signal, readBacklog })
          : await session(ctx, job, { reporter, log, signal, beforePush, fireStep });
    log.info("job done", { phase: outcome.phase, reason: outcome.reason });
    await reporter.complete(outcome);
  } catch (error) {
    const reason: StopReason | undefined = controller.signal.aborted ? controller.signal.reason : undefined;
    if (reason === "lease_lost" || reporter.lost) {
      log.warn("job abandoned: its lease is gone");
    } else if (reason === "cancelled") {
      log.info("job cancelled");
      await reporter.fail("cancelled", false);
    } else if (reason === "shutdown") {
      log.info("job interrupted by the runner's shutdown");
      await reporter.fail("interrupted: the runner shut down", true);
    } else {
      log.error("job failed", { error });
      const final =
        error instanceof PushRejectedError ||
        error instanceof PushRefusedError ||
        error instanceof NotAnAgentDriverError;
      await reporter.fail(errorMessage(error), !final);
    }
  } finally {
    lease.stop();
    shutdown.removeEventListener("abort", onShutdown);
  }
}

type SessionRun = {
  reporter: Reporter;
  log: Logger;
  signal: AbortSignal;
  /** Confirms the lease with the Worker; throws (the job aborted) when it is not ours any more. */
  beforePush: () => Promise<void>;
  fireStep: (step: string) => Promise<StepFiring>;
};

async function session(ctx: JobContext, job: Job, run: SessionRun): Promise<ReportOutcome> {
  const { reporter, log, signal } = run;
  const { workspace } = ctx;
  const ref = { repoKey: job.repo.fullName, issueNumber: job.issue.number };
  // The session starts while its worktree is fetched and checked out, where it can.
  const early = await startsEarly(ctx, job, ref);
  const preparing = prepareWorktree(ctx, job, ref, run);
  // Awaited below, or by the driver before it sends the prompt.
  preparing.catch(() => {});
  if (!early) await preparing;

  // A phase left by an earlier session must not be read as this one's.
  const phaseFile = ctx.layout.phaseFile(job.project, job.issue.number);
  await mkdir(dirname(phaseFile), { recursive: true });
  await rm(phaseFile, { recursive: true, force: true });
  const home = ctx.layout.agentHome(job.project, job.issue.number);
  await prepareAgentHome(home, DEFAULT_AUTHOR);

  // The job names the session its issue had when it was enqueued (none for an implement job). A later attempt
  // of a job that already started one here (the runner died, or the lease was lost) resumes that session: its
  // transcript is in this work dir, whether or not the Worker heard of it before the attempt ended.
  const sessionFile = ctx.layout.sessionFile(job.project, job.issue.number);
  const started = await sessionStartedBy(sessionFile, job.id);
  if (started) log.info("resuming the session an earlier attempt started", { sessionId: started });

  // An action's secrets are the runner's to hide from here on: in its logs, activity and reports.
  if (job.action) ctx.secrets.add(...Object.values(job.action.secrets));
  const steps =
    job.action &&
    (await openStepSource(workspace, ctx.layout.stepsDir(job.project, job.issue.number), {
      repoKey: ref.repoKey,
      baseBranch: job.repo.defaultBranch,
      commit: job.action.commit,
    }));
  const resumed = (briefed: Job) => (started ? { ...briefed, sessionId: started } : briefed);
  const result = await ctx.driver.run({
    job: resumed(early ? job : (await preparing).job),
    ...(early && { ready: preparing.then((prepared) => resumed(prepared.job)) }),
    worktree: workspace.worktreePath(ref),
    phaseFile,
    home,
    readOnly: [workspace.objectsPath(ref.repoKey)],
    signal,
    log,
    diffAgainstBase: () => workspace.diffAgainstBase(ref, job.repo.defaultBranch),
    onSession: (sessionId) => {
      void reporter.event({ kind: "session", sessionId, worktree: workspace.worktreePath(ref) });
      rememberSession(sessionFile, job.id, sessionId).catch((error: unknown) =>
        log.warn("cannot record the session for a later attempt", { error }),
      );
    },
    onUsage: (sessionId, usage) => void reporter.event({ kind: "usage", sessionId, usage }),
    onActivity: (items) => {
      const redacted = items.map((item) => ({ ...item, text: ctx.secrets.redact(item.text) }));
      void reporter.event({ kind: "activity", items: redacted });
    },
    onProgress: (seq, text) => void reporter.event({ kind: "progress", seq, text: ctx.secrets.redact(text) }),
    redact: (text) => ctx.secrets.redact(text),
    fireStep: run.fireStep,
    ...(steps && { steps }),
  });
  // What a crash or an abort leaves of it goes with the issue's next job, or its reap: it holds no secret.
  await steps?.close();
  const { worktree } = await preparing;
  // A session that ended on its own is still reported during a shutdown; not once the job is cancelled.
  if (signal.reason !== "shutdown") signal.throwIfAborted();
  const sessionId = result.sessionId ?? undefined;
  if (result.error) log.warn("session ended on an error", { error: result.error.message });

  const signalled = parsePhaseFile(await readPhaseFile(phaseFile));
  if (signalled.kind === "dry_exit") {
    if (result.error?.retryable) throw new Error(result.error.message);
    // Refused for its budget before the usage reached it (the proxy reserves each request's worst case).
    if (result.budgetSpent)
      return { phase: "failed", sessionId, reason: result.error?.message ?? "budget exceeded" };
    return { phase: "dry_exit", sessionId, ...(result.error ? { reason: result.error.message } : {}) };
  }
  if (signalled.kind === "invalid") {
    return { phase: "failed", sessionId, reason: `invalid phase file: ${JSON.stringify(signalled.line)}` };
  }
  const { phase, reason, step } = signalled;
  const summary = result.summary && ctx.secrets.redact(result.summary).slice(0, MAX_SUMMARY_CHARS);
  const base = {
    phase,
    sessionId,
    branch: worktree.branch,
    ...(reason ? { reason } : {}),
    ...(summary ? { summary } : {}),
  };
  // An action has no branch to push, whatever its session wrote.
  if (job.action) return { ...base, ...(step ? { step } : {}) };
  if (phase !== "awaiting_ci" && phase !== "awaiting_review") return base;

  const collected = await workspace.collect(ref, `Conveyor: uncommitted work on #${job.issue.number}`);
  if (collected.committedLeftovers) {
    log.info("committed what the session left uncommitted", { sha: collected.sha });
  }
  await run.beforePush();
  const headSha = await workspace.push(ref, { branch: job.branch, lease: job.headSha });
  log.info("pushed", { branch: worktree.branch, headSha });
  // Not waited for: it would wait for the runner's next report (up to a second, the slot held); the job's
  // last word sends what is queued at once, this first.
  void reporter.event({ kind: "pushed", branch: worktree.branch, headSha });
  return { ...base, headSha };
}

/**
 * Whether the job's session starts before its worktree is ready: where the driver can start it so, the
 * private repository is there (the sandbox binds its objects) and no earlier job's worktree is (whether that
 * one is kept is for the fetch to decide). Reserves the worktree's directory when it does.
 */
async function startsEarly(ctx: JobContext, job: Job, ref: IssueRef): Promise<boolean> {
  if (!ctx.driver.startsEarly?.(job)) return false;
  if (!existsSync(ctx.workspace.mirrorPath(ref.repoKey))) return false;
  return ctx.workspace.reserveWorktree(ref);
}

/**
 * The issue's worktree, fetched and checked out, and the job as its session is told it (an update job's
 * conflict brief, from the base just fetched).
 */
async function prepareWorktree(ctx: JobContext, job: Job, ref: IssueRef, run: SessionRun) {
  const { workspace } = ctx;
  await workspace.ensureMirror({ repoKey: ref.repoKey, remoteUrl: job.repo.cloneUrl });
  const worktree = await workspace.ensureWorktree({ ...ref, baseBranch: job.repo.defaultBranch });
  await ctx.holdings.add(issueRef(job.project, job.issue.number));
  run.log.info("worktree ready", { path: worktree.path, from: worktree.from });
  run.signal.throwIfAborted();
  const briefed = job.kind === "update" ? await withConflictBrief(workspace, ref, job) : job;
  return { worktree, job: briefed };
}

/**
 * An update job's instructions, as the runner sees the conflict in its private repository (the base just
 * fetched): the conflicting files, and what landed on the base meanwhile (the other side's intent).
 */
async function withConflictBrief(workspace: Workspace, ref: IssueRef, job: Job): Promise<Job> {
  const base = job.repo.defaultBranch;
  const { files, landed } = await workspace.conflictWithBase(ref, base);
  const list = (items: string[]) => items.map((item) => `- ${item}`).join("\n");
  const instructions = [
    files.length > 0
      ? `Files in conflict with ${base}:\n${list(files)}`
      : `Your branch now merges cleanly with ${base}; merge it anyway, run the tests and commit.`,
    landed.length > 0
      ? `What landed on ${base} since your branch left it (newest first):\n${list(landed)}`
      : "",
  ]
    .filter(Boolean)
    .join("\n\n");
  return { ...job, instructions };
}

async function reap(ctx: JobContext, job: Job): Promise<ReportOutcome> {
  await ctx.workspace.reap({ repoKey: job.repo.fullName, issueNumber: job.issue.number });
  await rm(ctx.layout.agentDir(job.project, job.issue.number), { recursive: true, force: true });
  await rm(ctx.layout.stepsDir(job.project, job.issue.number), { recursive: true, force: true });
  await rm(ctx.layout.sessionFile(job.project, job.issue.number), { force: true });
  await ctx.holdings.remove(issueRef(job.project, job.issue.number));
  return { phase: "done" };
}

/** The completion request carries at most this much of the agent's closing words. */
const MAX_SUMMARY_CHARS = 4_000;

const startedSchema = z.object({ jobId: z.string(), sessionId: z.string() });

async function rememberSession(file: string, jobId: string, sessionId: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ jobId, sessionId }));
}

/** The session `jobId` started here on an earlier attempt, if it did. */
async function sessionStartedBy(file: string, jobId: string): Promise<string | null> {
  const text = await readOptional(file);
  if (text === null) return null;
  try {
    const started = startedSchema.parse(JSON.parse(text));
    return started.jobId === jobId ? started.sessionId : null;
  } catch {
    // Cut short by a crash: as if no session had started.
    return null;
  }
}

/** The phase file is the agent's: read only as a plain file (no symlink, no FIFO), and only its head. */
const MAX_PHASE_BYTES = 8_192;

async function readPhaseFile(file: string): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") return "(the phase file is a symbolic link)";
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) return "(the phase file is not a plain file)";
    const buffer = Buffer.alloc(MAX_PHASE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, MAX_PHASE_BYTES, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}

async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

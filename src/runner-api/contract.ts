/**
 * The runner API's wire contract (`/runner/v1/*`), shared by the Worker (which parses requests with it) and
 * `conveyor-runner` (which parses responses with it). JSON over HTTPS; the runner authenticates with
 * `Authorization: Bearer <runner token>` on every call but `register`.
 *
 * Errors are `{"error": "<one line>"}`: 400 malformed body, 401 unknown runner token (or, for `register`, a
 * used, expired or unknown registration token), 403 the job is leased to another runner, 404 unknown job,
 * 409 the lease token is not the job's current lease (expired, requeued, finished): stop working on it.
 * `events`, `complete` and `fail` answer 204; repeating `complete` or `fail` under the same lease is harmless.
 *
 * Runner tokens expire. An authenticated answer carrying `TOKEN_ROTATE_HEADER` asks the runner to `rotate`:
 * it stores the new token, then uses it; the old one works until the new one's first use, then never again.
 */
import { z } from "zod";
import { AGENT_TOOLS, OUTPUT_TYPES } from "../agents/definition.ts";
import { MAX_REQUESTS_PER_RUN, requestedOutputSchema } from "../agents/outputs.ts";
import { PHASES } from "../domain/lifecycle.ts";
import { PROMPT_CACHE_TTLS } from "../domain/prompt-cache.ts";
import { VAULT_ID } from "../domain/vault.ts";
import { stepBindingSchema } from "../formulas/approval.ts";
import { formulaSchema, MAX_FORMULA_BYTES, SECRET_NAME, STEP_ID } from "../formulas/formula.ts";
import { projectIdSchema, sessionSandboxSchema } from "../projects/config.ts";
import { SANDBOX_KINDS } from "./sandbox.ts";

/** `agent`: a run of one of the project's agents (src/agents), about no issue. */
export const JOB_KINDS = ["implement", "revise", "resume", "update", "reap", "agent"] as const;
export type JobKind = (typeof JOB_KINDS)[number];

const sha = z.string().regex(/^[0-9a-f]{7,64}$/);

/** Where the runner runs sessions: `none` is `--unsafe-no-sandbox`. Optional: older runners do not say. */
export const sandboxSchema = z.enum(SANDBOX_KINDS);
export type SandboxKind = z.infer<typeof sandboxSchema>;

export const registerRequest = z.object({
  registrationToken: z.string().min(16).max(200),
  name: z.string().min(1).max(100),
  version: z.string().min(1).max(50),
  sandbox: sandboxSchema.optional(),
});
export type RegisterRequest = z.infer<typeof registerRequest>;
export const registerResponse = z.object({ runnerId: z.string(), token: z.string() });

/** Set (to `due`) on an authenticated answer when the runner's token is past half its lifetime. */
export const TOKEN_ROTATE_HEADER = "conveyor-token-rotate";

/** `POST /rotate` (no body) → 201: the runner's next token. */
export const rotateResponse = z.object({ token: z.string(), expiresAt: z.number().int() });

const bytes = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const diskReportSchema = z.object({
  bytes,
  worktrees: z.number().int().min(0).max(1_000_000),
  /** Free space (for an unprivileged user) and size of the file system holding the work dir; older runners do not say. */
  freeBytes: bytes.optional(),
  totalBytes: bytes.optional(),
});
export type DiskReport = z.infer<typeof diskReportSchema>;

/** The build host's memory and load, sampled at each claim (runner/host.ts): the supervisor's inputs. */
export const hostReportSchema = z.object({
  /** Memory the kernel could hand out without swapping (`MemAvailable`), and all of it. */
  memAvailableBytes: bytes,
  memTotalBytes: bytes.min(1),
  /** The one-minute load average, and the CPUs it is shared by. */
  load1: z.number().min(0).max(100_000),
  cpus: z.number().int().min(1).max(100_000),
});
export type HostReport = z.infer<typeof hostReportSchema>;

export const PRESSURE_RESOURCES = ["memory", "disk", "load"] as const;

/**
 * Why a runner claims nothing for now (runner/backpressure.ts): each resource past the runner's threshold,
 * with what it measured (available memory or free disk in bytes, one-minute load per CPU) and the threshold.
 * Sent with its claims and heartbeats while it holds back; a claim carrying it leases nothing.
 */
export const pressureSchema = z
  .array(
    z.object({
      resource: z.enum(PRESSURE_RESOURCES),
      value: z.number().min(0).max(Number.MAX_SAFE_INTEGER),
      limit: z.number().min(0).max(Number.MAX_SAFE_INTEGER),
    }),
  )
  .min(1)
  .max(PRESSURE_RESOURCES.length);
export type Pressure = z.infer<typeof pressureSchema>;

/**
 * The longest a claim may wait. A runner's heartbeats come at most `MAX_HEARTBEAT_INTERVAL_MS` apart, so this is
 * the longest a live runner is silent: one silent longer has stopped (runner-api/presence.ts).
 */
export const MAX_CLAIM_WAIT_MS = 25_000;
export const MAX_HEARTBEAT_INTERVAL_MS = 20_000;

/** Long-poll: the Worker holds the request up to `waitMs` (≤ 25 s) for a job. 204 = nothing to do. */
export const claimRequest = z.object({
  waitMs: z.number().int().min(0).max(MAX_CLAIM_WAIT_MS).default(20_000),
  /** Issues whose worktree and session transcript this runner holds (`issueRef`): affinity. */
  holding: z.array(z.string().max(200)).max(1_000).default([]),
  /**
   * Take jobs of these projects only; all registered projects when absent. A runner registered with a
   * project-bound token gets jobs of those projects only, whatever it asks.
   */
  projects: z.array(projectIdSchema).min(1).max(100).optional(),
  sandbox: sandboxSchema.optional(),
  /** Disk used under the runner's work dir and its worktree count, measured now and then (runner/disk.ts). */
  disk: diskReportSchema.optional(),
  /** Memory and load, sent with every claim (the Worker records them at most once in a while). */
  host: hostReportSchema.optional(),
  /** The runner holds back (memory, disk or load past its thresholds): answered 204 at once, nothing leased. */
  pressure: pressureSchema.optional(),
});

/** How `holding` names an issue. */
export const issueRef = (project: string, number: number) => `${project}#${number}`;

/**
 * What an agent job runs: the prompt the Worker composed (the definition's body and the run's context), the
 * read-only tools its definition allows, and the safe outputs it may ask for (runner/agents/safe-outputs.ts).
 */
/**
 * A review run's pull request (the built-in `reviewer`): the runner fetches `ref`, checks out `headSha` (the
 * commit CI passed; any other is refused), and writes the context files into a directory of its own that the
 * session sees read-only (runner/agents/review-context.ts), never into the pull request's tree.
 */
/** Jobs are kept in a Durable Object's SQLite, whose rows stay under 2 MB: a longer diff is cut. */
export const MAX_REVIEW_DIFF = 800_000;
export const MAX_REVIEW_CONTEXT = 400_000;

export const reviewCheckoutSchema = z.object({
  pr: z.number().int().positive(),
  /** `refs/heads/conveyor/<n>` for Conveyor's pull requests, the forge's `refs/pull/<n>/head` for others'. */
  ref: z
    .string()
    .regex(/^refs\/(heads|pull)\/[A-Za-z0-9._/-]{1,200}$/)
    .refine((ref) => !ref.includes("..") && !ref.endsWith(".lock"), "not a usable ref"),
  headSha: sha,
  /** `pull-request.json`: the pull request, its issue, the critic's earlier rounds. */
  pullRequest: z.string().max(MAX_REVIEW_CONTEXT),
  /** `diff.patch`: the diff against the base. */
  diff: z.string().max(MAX_REVIEW_DIFF),
});
export type ReviewCheckout = z.infer<typeof reviewCheckoutSchema>;

export const agentRunSchema = z.object({
  /** Names the run's worktree and HOME on the runner: no path separators, no dots. */
  runId: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  name: z.string().min(1).max(40),
  prompt: z.string().min(1).max(400_000),
  tools: z.array(z.enum(AGENT_TOOLS)).max(AGENT_TOOLS.length),
  outputs: z.array(z.enum(OUTPUT_TYPES)).max(OUTPUT_TYPES.length),
  model: z.string().min(1).max(100).optional(),
  /** Set for a review run: the worktree is the pull request's head, not the default branch. */
  review: reviewCheckoutSchema.optional(),
});
export type AgentRun = z.infer<typeof agentRunSchema>;

/**
 * What an action job runs (an `implement` or `resume` job of an `action` issue): its formula, read from the
 * default branch at `commit` when the job was queued (every step runs from a checkout of that commit), and
 * the one dangerous step the vault approved for this job, if any, with the item that approved it (the runner
 * spends that approval with `fire` before the step runs) and what it approved: the commit and the files the
 * command names there, which the runner checks before the step runs. `secrets`: the values of the project's
 * secrets the formula declares, opened by the Worker at claim time (never stored in the job queue): the
 * runner gives each step only its own, as environment variables.
 */
export const actionRunSchema = z.object({
  formula: formulaSchema,
  guidance: z.string().max(MAX_FORMULA_BYTES),
  /** Null from Workers before steps ran from the formula's commit: the runner takes the default branch's head. */
  commit: stepBindingSchema.shape.commit.nullable().default(null),
  approvedStep: z.string().regex(STEP_ID).nullable().default(null),
  approvedItem: z.string().regex(VAULT_ID).nullable().default(null),
  approval: stepBindingSchema.nullable().default(null),
  secrets: z.record(z.string().regex(SECRET_NAME), z.string().max(10_000)).default({}),
});
export type ActionRun = z.infer<typeof actionRunSchema>;

export const jobSchema = z.object({
  id: z.string(),
  kind: z.enum(JOB_KINDS),
  attempt: z.number().int().min(1),
  project: z.string(),
  /** The issue the job is about; an agent job is about none, and carries number 0. */
  issue: z.object({ number: z.number().int().min(0), title: z.string(), body: z.string() }),
  repo: z.object({
    /** `owner/name`; with `cloneUrl` it keys the runner's bare mirror. */
    fullName: z.string(),
    cloneUrl: z.string().url(),
    defaultBranch: z.string(),
  }),
  branch: z.string(),
  /**
   * The branch's head as the Worker last recorded it (null before the first push): the lease under which the
   * runner may force-push the branch, and only that branch (runner/git/push-rules.ts).
   */
  headSha: sha.nullable().default(null),
  iteration: z.number().int().min(0),
  /** Set for continuations: resume this Claude session. */
  sessionId: z.string().nullable(),
  /** Why this continuation runs: the CI failure excerpt, the critic's findings, or a human's reply. */
  instructions: z.string().max(100_000).nullable(),
  budget: z.object({ maxTurns: z.number().int().positive(), usdRemaining: z.number().min(0) }),
  /** The project's sandbox settings; jobs queued before they existed get the defaults. */
  sandbox: sessionSandboxSchema.prefault({}),
  /** The prompt cache's lifetime the session asks for (src/domain/prompt-cache.ts); older Workers send none. */
  promptCacheTtl: z.enum(PROMPT_CACHE_TTLS).default("5m"),
  /** Set for (and only for) `agent` jobs. */
  agent: agentRunSchema.optional(),
  /** Set for the sessions of `action` issues: no pull request, the formula's tools. */
  action: actionRunSchema.optional(),
});
export type Job = z.infer<typeof jobSchema>;

export const claimResponse = z.object({
  job: jobSchema,
  leaseToken: z.string(),
  /** Epoch ms, the Worker's clock: for logs only; runners keep time with `leaseMs`. */
  leaseExpiresAt: z.number().int(),
  /**
   * How long the lease lasts from this answer. A new lease is short (`jobs.confirmMs`) until the runner's
   * first heartbeat confirms it: heartbeat at once, then at a third of each `leaseMs`. Absent from older Workers.
   */
  leaseMs: z.number().int().positive().optional(),
});
export type Claim = z.infer<typeof claimResponse>;

/**
 * Before an approved dangerous step runs: the Worker marks its vault item fired, once. `fired: false` says why
 * the step may not run (it fired already, under an earlier attempt; the job carries no approval of it).
 */
export const fireRequest = z.object({ leaseToken: z.string(), step: z.string().regex(STEP_ID) });
export const fireResponse = z.discriminatedUnion("fired", [
  z.object({ fired: z.literal(true) }),
  z.object({ fired: z.literal(false), reason: z.string() }),
]);
export type FireResponse = z.infer<typeof fireResponse>;

export const heartbeatRequest = z.object({
  leaseToken: z.string(),
  /** As with a claim: a runner whose slots are all busy claims nothing, but heartbeats. */
  disk: diskReportSchema.optional(),
  host: hostReportSchema.optional(),
  /** Absent: the runner does not hold back (any more). */
  pressure: pressureSchema.optional(),
});
export const heartbeatResponse = z.object({
  leaseExpiresAt: z.number().int(),
  /** How long the lease lasts from this answer (the Worker's clock never meets the runner's). */
  leaseMs: z.number().int().positive().optional(),
  /** The issue was abandoned: stop the session and report `fail` with `cancelled`. */
  cancelled: z.boolean(),
});

export const usageSchema = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  cacheReadTokens: z.number().int().min(0),
  cacheWriteTokens: z.number().int().min(0),
  usd: z.number().min(0),
  turns: z.number().int().min(0),
});
export type Usage = z.infer<typeof usageSchema>;

/** A step of a session as the runner saw it go by: the agent's words, a tool call, a tool's answer. */
export const activityItemSchema = z.object({
  at: z.number().int().min(0),
  kind: z.enum(["text", "tool", "result", "error"]),
  text: z.string().max(1_000),
});
export type ActivityItem = z.infer<typeof activityItemSchema>;

export const runnerEvent = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("session"), sessionId: z.string().min(1), worktree: z.string().max(1_000) }),
  /** The session's usage so far in this job attempt; sending it again replaces the earlier figures. */
  z.object({ kind: z.literal("usage"), sessionId: z.string().min(1), usage: usageSchema }),
  z.object({ kind: z.literal("pushed"), branch: z.string().min(1), headSha: sha }),
  z.object({ kind: z.literal("activity"), items: z.array(activityItemSchema).min(1).max(50) }),
  /**
   * An action session's progress note for its issue (the `progress` tool), posted once as a comment: `seq`
   * counts the job attempt's notes from 1, so a report sent again is the same note.
   */
  z.object({
    kind: z.literal("progress"),
    seq: z.number().int().min(1).max(1_000),
    text: z.string().min(1).max(2_000),
  }),
  z.object({
    kind: z.literal("log"),
    level: z.enum(["debug", "info", "warn", "error"]),
    message: z.string().max(10_000),
  }),
]);
export type RunnerEvent = z.infer<typeof runnerEvent>;

export const eventsRequest = z.object({
  leaseToken: z.string(),
  events: z.array(runnerEvent).min(1).max(100),
});

/** The session's outcome: the phase it wrote (first line of the phase file) or a dry exit. */
export const completeRequest = z.object({
  leaseToken: z.string(),
  phase: z.enum(PHASES),
  reason: z.string().max(2_000).optional(),
  sessionId: z.string().min(1).optional(),
  branch: z.string().min(1).optional(),
  headSha: sha.optional(),
  /** The session's own account of what it did (its last message), for the pull request's description. */
  summary: z.string().max(4_000).optional(),
  /** `vault`: the formula step the action session stopped at (its phase file's `Step:` line). */
  step: z.string().regex(STEP_ID).optional(),
  /** An agent job's requested safe outputs, in the order it asked; the Worker decides which are applied. */
  outputs: z.array(requestedOutputSchema).max(MAX_REQUESTS_PER_RUN).optional(),
  /** An agent job's usage (as its last `usage` event would say): it counts in the project's daily budget. */
  usage: usageSchema.optional(),
});
export type CompleteRequest = z.infer<typeof completeRequest>;

export const failRequest = z.object({
  leaseToken: z.string(),
  error: z.string().max(10_000),
  /** false: the job cannot succeed by running again (e.g. cancelled); true: requeue with attempt + 1. */
  retryable: z.boolean(),
});
export type FailRequest = z.infer<typeof failRequest>;

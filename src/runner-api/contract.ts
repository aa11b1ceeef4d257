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

/** Long-poll: the Worker holds the request up to `waitMs` (≤ 25 s) for a job. 204 = nothing to do. */
export const claimRequest = z.object({
  waitMs: z.number().int().min(0).max(25_000).default(20_000),
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
});

/** How `holding` names an issue. */
export const issueRef = (project: string, number: number) => `${project}#${number}`;

/**
 * What an agent job runs: the prompt the Worker composed (the definition's body and the run's context), the
 * read-only tools its definition allows, and the safe outputs it may ask for (runner/agents/safe-outputs.ts).
 */
export const agentRunSchema = z.object({
  /** Names the run's worktree and HOME on the runner: no path separators, no dots. */
  runId: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  name: z.string().min(1).max(40),
  prompt: z.string().min(1).max(400_000),
  tools: z.array(z.enum(AGENT_TOOLS)).max(AGENT_TOOLS.length),
  outputs: z.array(z.enum(OUTPUT_TYPES)).max(OUTPUT_TYPES.length),
  model: z.string().min(1).max(100).optional(),
});
export type AgentRun = z.infer<typeof agentRunSchema>;

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
  /** Set for (and only for) `agent` jobs. */
  agent: agentRunSchema.optional(),
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

export const heartbeatRequest = z.object({
  leaseToken: z.string(),
  /** As with a claim: a runner whose slots are all busy claims nothing, but heartbeats. */
  disk: diskReportSchema.optional(),
  host: hostReportSchema.optional(),
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

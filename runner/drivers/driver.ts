import type { RequestedOutput } from "../../src/agents/outputs.ts";
import type { ActivityItem, AgentRun, Job, Usage } from "../../src/runner-api/contract.ts";
import type { StepFiring } from "../actions/action-tools.ts";
import type { StepSource } from "../actions/step-source.ts";
import type { BacklogReader } from "../agents/safe-outputs.ts";
import type { Logger } from "../log.ts";

/** What a driver needs to run one session of a job in its worktree. */
export type SessionInput = {
  job: Job;
  /** The worktree: the session's cwd. */
  worktree: string;
  /** Outside the worktree, cleared before the session; the agent finds it as `$CONVEYOR_PHASE_FILE`. */
  phaseFile: string;
  /** The agent's HOME for this issue: its Claude transcripts (so `resume` finds them) and git identity. */
  home: string;
  /** Read-only besides the system: the private repository's objects that the worktree borrows. */
  readOnly: readonly string[];
  /** Aborted when the job is cancelled, its lease is lost or the runner shuts down. */
  signal: AbortSignal;
  log: Logger;
  /** The branch's committed work against the default branch: the checkpoint a fresh session recovers from. */
  diffAgainstBase(): Promise<string>;
  /** As soon as the session id is known. */
  onSession(sessionId: string): void;
  /** After every session result: this session's consumption (not the transcript's running total). */
  onUsage(sessionId: string, usage: Usage): void;
  /** What the session is doing, as it goes (activity.ts). */
  onActivity(items: ActivityItem[]): void;
  /** An action session's progress note (runner/actions/action-tools.ts), redacted, numbered from 1. */
  onProgress?(seq: number, text: string): void;
  /** The runner's redaction of its secrets, for what an action's tools show the agent. */
  redact?(text: string): string;
  /** Spends the job's vault approval of an action's dangerous step, on the Worker, before it runs. */
  fireStep?(step: string): Promise<StepFiring>;
  /** Where an action's steps run from: the runner's checkout of the formula's commit (step-source.ts). */
  steps?: StepSource;
  /**
   * Given only to a driver that `startsEarly`: the worktree's directory is there but still being filled.
   * Nothing may read it, and no prompt go, before this resolves, with the job as its session is to be told
   * (an update job's conflict brief); a rejection is the job's failure.
   */
  ready?: Promise<Job>;
};

export type SessionResult = {
  sessionId: string | null;
  /** The agent's closing words, when it gave some. */
  summary?: string;
  /** The session ended on an error (API error, turn or budget limit); the phase file may still be there. */
  error?: { message: string; retryable: boolean };
  /** The model proxy refused a request for the budget: what is left cannot pay for its worst case. */
  budgetSpent?: true;
};

/**
 * Runs an agent session for a job. Resolves when the session ended on its own (with or without an error);
 * rejects with `signal.reason` when the signal interrupted it, and with other errors only for failures of
 * the driver itself.
 */
export interface Driver {
  run(input: SessionInput): Promise<SessionResult>;
  /** Whether it can start this job's session while the worktree is being prepared (`SessionInput.ready`). */
  startsEarly?(job: Job): boolean;
}

/** What a driver needs to run one agent run: its own fresh worktree of the default branch, its own HOME. */
export type AgentInput = Pick<
  SessionInput,
  "job" | "worktree" | "home" | "readOnly" | "signal" | "log" | "onSession" | "onUsage" | "onActivity"
> & {
  agent: AgentRun;
  /** The run's `read_backlog` tool asks the Worker through this (runner/agents/safe-outputs.ts). */
  readBacklog?: BacklogReader;
};

export type AgentResult = {
  sessionId: string | null;
  /** The safe outputs the agent asked for, in order. */
  outputs: RequestedOutput[];
  /** The run's usage as the model proxy counted it; null when the model was never reached. */
  usage: Usage | null;
  error?: { message: string; retryable: boolean };
};

/** A driver that can run agents (src/agents): the scripted driver cannot. */
export interface AgentDriver {
  runAgent(input: AgentInput): Promise<AgentResult>;
}

export const runsAgents = (driver: Driver): driver is Driver & AgentDriver =>
  typeof (driver as Partial<AgentDriver>).runAgent === "function";

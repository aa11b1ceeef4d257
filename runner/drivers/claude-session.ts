import {
  type Options,
  type Query,
  query,
  type SDKResultMessage,
  startup,
} from "@anthropic-ai/claude-agent-sdk";
import type { ActivityItem, Usage } from "../../src/runner-api/contract.ts";
import type { Logger } from "../log.ts";
import type { CacheLifetime } from "../sandbox/cache-lifetime.ts";
import type { Place, Sandbox } from "../sandbox/session-sandbox.ts";
import { activityOf } from "./activity.ts";

/** One Claude Code process in the sandbox, run to its result. */
export type ClaudeSessionOptions = {
  sandbox: Sandbox;
  place: Place;
  /**
   * A promise when the place is still being prepared: Claude Code starts at once (its process, tools and
   * handshake, the longest part of a session's start), and the prompt, with it the first model request, goes
   * once the promise resolves. It must resolve only when the place is ready. Claude Code reads no more of its
   * cwd before the prompt than whether it is a repository (runner/git/issue-worktree.ts reserves one).
   */
  prompt: string | Promise<string>;
  /** The agent's environment (HOME, PATH, …); the sandbox adds the model proxy's. */
  env: Record<string, string>;
  allowedTools: readonly string[];
  /** In-process MCP servers (the runner's own tools, such as safe outputs): they run here, not in the sandbox. */
  mcpServers?: Options["mcpServers"];
  projectSettings: boolean;
  allowedDomains: readonly string[];
  budgetUsd: number;
  /** The prompt cache's lifetime the session's requests ask for (the job's). */
  cacheLifetime?: CacheLifetime;
  maxTurns: number;
  model?: string | undefined;
  resume?: string | undefined;
  signal: AbortSignal;
  log: Logger;
  onSession(sessionId: string): void;
  onUsage(sessionId: string, usage: Usage): void;
  onActivity(items: ActivityItem[]): void;
};

export type ClaudeRun = {
  sessionId: string | null;
  result?: SDKResultMessage;
  thrown?: unknown;
  budgetSpent?: boolean;
};

/**
 * Runs one session on the Claude Agent SDK with its Claude Code process inside the sandbox. Usage comes from
 * the sandbox's model proxy, which also holds the session to its budget: Claude Code's own figures are the
 * agent's to forge.
 */
export async function claudeSession(options: ClaudeSessionOptions): Promise<ClaudeRun> {
  const { log, signal, resume } = options;
  // A place that fails to be prepared is the caller's error, thrown once Claude Code is starting (below).
  if (typeof options.prompt !== "string") options.prompt.catch(() => {});
  const run: ClaudeRun = { sessionId: null };
  const claudeCode = await options.sandbox.claudeCode();
  const session = await options.sandbox.open(options.place, {
    budgetUsd: options.budgetUsd,
    allowedDomains: options.allowedDomains,
    ...(options.cacheLifetime && { cacheLifetime: options.cacheLifetime }),
    onUsage: (usage) => {
      if (run.sessionId !== null) options.onUsage(run.sessionId, usage);
    },
  });
  const abortController = new AbortController();
  const abort = () => abortController.abort(signal.reason);
  signal.addEventListener("abort", abort, { once: true });
  const sdkOptions: Options = {
    cwd: options.place.worktree,
    env: { ...options.env, ...session.env },
    permissionMode: "dontAsk",
    allowedTools: [...options.allowedTools],
    // The repository's own .claude/settings.json (hooks, env) only where the project opted in; none of the
    // runner user's. CLAUDE.md is then read by the agent itself (the prompt says so).
    settingSources: options.projectSettings ? ["project"] : [],
    maxTurns: options.maxTurns,
    abortController,
    pathToClaudeCodeExecutable: claudeCode,
    spawnClaudeCodeProcess: ({ command, args, env, signal: kill }) => {
      const child = session.spawnController(command, args, { env: definedOnly(env), signal: kill });
      child.stderr?.on("data", (data: Buffer) => log.debug("claude stderr", { data: data.toString("utf8") }));
      return child as ReturnType<NonNullable<Options["spawnClaudeCodeProcess"]>>;
    },
    ...(options.mcpServers && { mcpServers: options.mcpServers }),
    ...(options.model && { model: options.model }),
    ...(resume && { resume }),
  };
  try {
    signal.throwIfAborted();
    const messages = await started(options.prompt, sdkOptions, log);
    for await (const message of messages) {
      const activity = activityOf(message, Date.now());
      if (activity.length > 0) options.onActivity(activity);
      if (message.type === "system" && message.subtype === "init") {
        run.sessionId = message.session_id;
        log.info(resume ? "session resumed" : "session started", { sessionId: run.sessionId });
        options.onSession(run.sessionId);
      } else if (message.type === "result") {
        run.result = message;
      }
    }
  } catch (error) {
    if (error instanceof PlaceNotReady) {
      abortController.abort();
      throw error.cause;
    }
    // After an error result the SDK throws; the result says more than the exception.
    run.thrown = error;
  } finally {
    signal.removeEventListener("abort", abort);
    run.budgetSpent = session.budgetRefused;
    await session.close();
  }
  return run;
}

/** The place's preparation failed: the job's failure, not the session's. */
class PlaceNotReady extends Error {}

/** Claude Code started and given its prompt: at once for a ready place, else started while it is prepared. */
async function started(prompt: string | Promise<string>, options: Options, log: Logger): Promise<Query> {
  if (typeof prompt === "string") return query({ prompt, options });
  const warming = startup({ options });
  void warming.then(
    () => log.info("claude code started; its prompt waits for its place"),
    () => {},
  );
  let text: string;
  try {
    text = await prompt;
  } catch (error) {
    // Stopped before the session closes, which waits for its process: it must not start after that.
    await warming.then(
      (warm) => warm.close(),
      () => {},
    );
    throw new PlaceNotReady("the session's place is not ready", { cause: error });
  }
  return (await warming).query(text);
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

import { type Options, query, type SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ActivityItem, Usage } from "../../src/runner-api/contract.ts";
import type { Logger } from "../log.ts";
import type { CacheLifetime } from "../sandbox/cache-lifetime.ts";
import type { Place, Sandbox } from "../sandbox/session-sandbox.ts";
import { activityOf } from "./activity.ts";

/** One Claude Code process in the sandbox, run to its result. */
export type ClaudeSessionOptions = {
  sandbox: Sandbox;
  place: Place;
  prompt: string;
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
    for await (const message of query({ prompt: options.prompt, options: sdkOptions })) {
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
    // After an error result the SDK throws; the result says more than the exception.
    run.thrown = error;
  } finally {
    signal.removeEventListener("abort", abort);
    run.budgetSpent = session.budgetRefused;
    await session.close();
  }
  return run;
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/**
 * What the sandbox costs a session's start: from `query()` to the model's first request, for Claude Code in
 * bubblewrap behind the model proxy against Claude Code behind the same proxy without bubblewrap.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { agentEnv } from "../../runner/drivers/env.ts";
import { type Place, Sandbox, type SandboxMode } from "../../runner/sandbox/session-sandbox.ts";
import { tempDir } from "../node/git/support.ts";
import { text } from "../support/model/script.ts";
import { startModelStandIn } from "../support/model/server.ts";
import { emit, percentile } from "./load.ts";

/** Its sandboxed p50: a bare sandboxed Claude Code start to its first model request, the floor of a session's start. */
export async function benchSandboxStart({ runs = 7 } = {}): Promise<number> {
  const root = await tempDir("bench-sandbox");
  let firstRequestAt = 0;
  const standIn = await startModelStandIn({
    script: () => {
      firstRequestAt ||= performance.now();
      return text("Started.");
    },
  });
  try {
    const startMs = async (mode: SandboxMode, run: number): Promise<number> => {
      const place: Place = {
        worktree: join(root, `${mode}-${run}`, "wt"),
        writable: [join(root, `${mode}-${run}`, "home"), join(root, `${mode}-${run}`, "phase")],
        readOnly: [],
      };
      for (const dir of [place.worktree, ...place.writable]) await mkdir(dir, { recursive: true });
      const sandbox = new Sandbox({
        mode,
        model: { baseUrl: standIn.url, apiKey: "bench-key" },
        secretFiles: [],
      });
      const [home = "", phaseDir = ""] = place.writable;
      // Made once per binary (at the runner's start), not per session.
      const claudeCode = await sandbox.claudeCode();
      firstRequestAt = 0;
      const start = performance.now();
      const session = await sandbox.open(place, { budgetUsd: 1, allowedDomains: [] });
      try {
        const messages = query({
          prompt: "Start.",
          options: {
            cwd: place.worktree,
            env: { ...agentEnv({ home, phaseFile: join(phaseDir, "PHASE") }), ...session.env },
            permissionMode: "dontAsk",
            settingSources: [],
            maxTurns: 1,
            pathToClaudeCodeExecutable: claudeCode,
            spawnClaudeCodeProcess: ({ command, args, env, signal }) =>
              session.spawnController(command, args, {
                env: Object.fromEntries(
                  Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
                ),
                signal,
              }) as never,
          },
        });
        for await (const _ of messages);
      } finally {
        await session.close();
      }
      return firstRequestAt - start;
    };
    const figures: Record<SandboxMode, number[]> = { bubblewrap: [], none: [] };
    // Alternated, so that a slow moment of the machine hits both alike.
    for (let run = 0; run < runs; run++) {
      for (const mode of ["none", "bubblewrap"] as const) figures[mode].push(await startMs(mode, run));
    }
    const baseline = percentile(figures.none, 50);
    const sandboxed = percentile(figures.bubblewrap, 50);
    emit({ name: "session_start_sandboxed_p50", value: sandboxed, unit: "ms", baseline });
    emit({
      name: "session_start_sandbox_overhead_p50",
      value: sandboxed - baseline,
      unit: "ms",
      target: "< 300",
    });
    return sandboxed;
  } finally {
    await standIn.close();
    await rm(root, { recursive: true, force: true });
  }
}
